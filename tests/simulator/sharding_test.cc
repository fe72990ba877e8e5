// ZeRO 0-3 / FSDP / hybrid sharding collectives, tp_comm_overlap,
// overlap_param_gather and SM contention in the lowering and the simulation
// (semantics in simulator/lowering.h and simulator/simulate.h).
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "reports/step_report_json.h"
#include "simulator/lowering.h"
#include "simulator/roofline.h"
#include "simulator/simulate.h"
#include "tests/simulator/test_cluster.h"

namespace llmplan::simulator {
namespace {

using testing::a100_cluster;
using testing::gpt;

// A cluster without launch costs, so exposed collectives keep their times.
Cluster quiet_cluster() {
  Cluster c = a100_cluster();
  c.gpu.roofline.kernel_overhead_s = 0;
  return c;
}

Plan base_plan(int t, int p, int d, int m) {
  Plan plan;
  plan.tensor_parallel = t;
  plan.pipeline_parallel = p;
  plan.data_parallel = d;
  plan.global_batch_size = d * m;
  return plan;
}

double sum_parts(const StageBreakdown& b) {
  return b.compute_s + b.recompute_s + b.tp_comm_s + b.host_overhead_s + b.pp_exposed_s +
         b.bubble_s + b.dp_exposed_s + b.optimizer_s + b.fsdp_gather_exposed_s +
         b.fsdp_reduce_scatter_exposed_s + b.cp_comm_s + b.overlap_slowdown_s + b.fp8_cast_s;
}

double total_time(const std::vector<PassCollective>& cs) {
  double s = 0;
  for (const PassCollective& c : cs) s += c.time_s;
  return s;
}

TEST(Sharding, Stage3GathersEveryUnitTwiceAndReduceScattersOnce) {
  // 4 layers, one chunk: units embedding, 4 layers, head.
  const Model model = gpt(4, 512, 8, 256, 1000);
  const Cluster cluster = quiet_cluster();
  Plan plan = base_plan(1, 1, 4, 2);
  plan.zero_stage = 3;
  const Placement pl = place(plan, cluster);
  EXPECT_EQ(pl.shard, (CommGroup{4, 4}));
  const Roofline cost(cluster);
  const ChunkProgram prog = lower_chunk(model, plan, pl, cost, 0);
  const double layer_params = static_cast<double>(model.layer_parameters());
  ASSERT_EQ(prog.forward_collectives.size(), 6u);
  ASSERT_EQ(prog.backward_collectives.size(), 12u);  // gather + reduce-scatter per unit
  double gathered = 0;
  for (size_t u = 0; u < 6; ++u) {
    const PassCollective& c = prog.forward_collectives[u];
    EXPECT_EQ(c.kind, CollectiveKind::kAllGather);
    if (u >= 1 && u <= 4) {
      EXPECT_DOUBLE_EQ(c.bytes, layer_params * 2.0) << u;  // bf16
    }
    gathered += c.bytes;
  }
  EXPECT_DOUBLE_EQ(gathered, prog.parameters * 2.0);
  double scattered = 0, regathered = 0;
  for (size_t k = 0; k < 12; ++k) {
    const PassCollective& c = prog.backward_collectives[k];
    EXPECT_EQ(c.kind, k % 2 == 0 ? CollectiveKind::kAllGather : CollectiveKind::kReduceScatter);
    (k % 2 == 0 ? regathered : scattered) += c.bytes;
  }
  EXPECT_DOUBLE_EQ(regathered, prog.parameters * 2.0);
  EXPECT_DOUBLE_EQ(scattered, prog.grad_bytes);  // fp32 gradients for bf16

  // Every micro-batch issues them: exposed + hidden = m x the issued time.
  for (bool overlap : {false, true}) {
    plan.overlap_param_gather = overlap;
    plan.overlap_grad_reduce = overlap;
    const ChunkProgram p2 = lower_chunk(model, plan, pl, cost, 0);
    auto r = simulate(model, plan, cluster);
    ASSERT_TRUE(r.ok()) << r.status().message();
    const StageBreakdown& b = r->breakdown;
    const double issued =
        2 * (total_time(p2.forward_collectives) + total_time(p2.backward_collectives));
    EXPECT_NEAR(b.fsdp_gather_exposed_s + b.fsdp_reduce_scatter_exposed_s + b.fsdp_hidden_s, issued,
                1e-9 * issued)
        << overlap;
    EXPECT_GT(b.fsdp_gather_exposed_s, 0);  // at least the first unit's gather
    if (overlap) {
      EXPECT_GT(b.fsdp_hidden_s, 0);
    } else {
      EXPECT_EQ(b.fsdp_hidden_s, 0);
    }
    // No per-step gradient reduction or parameter gather in stage 3.
    EXPECT_EQ(b.dp_exposed_s, 0);
  }
}

TEST(Sharding, Stage2ReduceScattersEveryMicroBatchAndGathersAfterTheOptimizer) {
  const Model model = gpt(4, 512, 8, 256, 1000);
  const Cluster cluster = quiet_cluster();
  Plan plan = base_plan(1, 1, 4, 3);
  plan.zero_stage = 2;
  const Roofline cost(cluster);
  const ChunkProgram prog = lower_chunk(model, plan, place(plan, cluster), cost, 0);
  EXPECT_TRUE(prog.forward_collectives.empty());
  ASSERT_EQ(prog.backward_collectives.size(), 6u);
  double bytes = 0;
  for (const PassCollective& c : prog.backward_collectives) {
    EXPECT_EQ(c.kind, CollectiveKind::kReduceScatter);
    bytes += c.bytes;
  }
  EXPECT_DOUBLE_EQ(bytes, prog.grad_bytes);
  SimOptions opts;
  opts.keep_timeline = true;
  auto r = simulate(model, plan, cluster, opts);
  ASSERT_TRUE(r.ok());
  int gathers = 0, bucket_reductions = 0;
  for (const TimelineEvent& e : r->timeline) {
    gathers += e.name == "dp all_gather parameters";
    bucket_reductions += e.name.find("dp reduce_scatter gradients") != std::string::npos;
  }
  EXPECT_EQ(gathers, 1);
  EXPECT_EQ(bucket_reductions, 0);
  const double issued = 3 * total_time(prog.backward_collectives);
  const StageBreakdown& b = r->breakdown;
  EXPECT_NEAR(b.fsdp_reduce_scatter_exposed_s + b.fsdp_hidden_s, issued, 1e-9 * issued);
  EXPECT_EQ(b.fsdp_gather_exposed_s, 0);
}

TEST(Sharding, HybridAddsTheCrossReplicaAllReduceOnStridedGroups) {
  const Model model = gpt(4, 512, 8, 256, 1000);
  const Cluster cluster = quiet_cluster();  // 8 GPUs per node
  Plan plan = base_plan(1, 1, 8, 2);
  plan.zero_stage = 3;
  plan.fsdp_group = 2;
  Placement pl = place(plan, cluster);
  EXPECT_EQ(pl.shard, (CommGroup{2, 2}));
  EXPECT_EQ(pl.replica, (CommGroup{4, 4}));
  Plan wide = plan;
  wide.tensor_parallel = 4;
  wide.global_batch_size = 16;
  pl = place(wide, cluster);
  EXPECT_EQ(pl.shard, (CommGroup{2, 2}));    // 2 x 4 GPUs: one node
  EXPECT_EQ(pl.replica, (CommGroup{4, 1}));  // 8 GPUs apart: a node each

  SimOptions opts;
  opts.keep_timeline = true;
  const Roofline cost(cluster);
  for (int group : {0, 2}) {
    plan.fsdp_group = group;
    auto r = simulate(model, plan, cluster, opts);
    ASSERT_TRUE(r.ok()) << r.status().message();
    int found = 0;
    double duration = 0;
    for (const TimelineEvent& e : r->timeline) {
      if (e.name != "dp all_reduce gradient shard across replicas") continue;
      ++found;
      duration = e.end_s - e.start_s;
    }
    EXPECT_EQ(found, group == 2 ? 1 : 0);
    if (group == 2) {
      const ChunkProgram prog = lower_chunk(model, plan, place(plan, cluster), cost, 0);
      CollectiveDesc c{CollectiveKind::kAllReduce, prog.grad_bytes / 2, CommGroup{4, 4}};
      EXPECT_DOUBLE_EQ(duration, cost.collective_time_s(c));
      EXPECT_GT(duration, 0);
    }
  }
}

TEST(Sharding, WithoutDataParallelismEveryStageIsTheSame) {
  const Model model = gpt(8, 1024, 16, 512, 5000);
  const Cluster cluster = a100_cluster();
  Plan plan = base_plan(2, 2, 1, 4);
  auto base = simulate(model, plan, cluster);
  ASSERT_TRUE(base.ok());
  for (int stage : {1, 2, 3}) {
    Plan z = plan;
    z.zero_stage = stage;
    z.overlap_param_gather = true;
    auto r = simulate(model, z, cluster);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->iteration_time_s, base->iteration_time_s) << stage;
    EXPECT_EQ(r->num_tasks, base->num_tasks) << stage;
  }
  // tp_comm_overlap needs t > 1 to change anything.
  Plan one = base_plan(1, 2, 1, 4);
  auto a = simulate(model, one, cluster);
  one.tp_comm_overlap = true;
  auto b = simulate(model, one, cluster);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->iteration_time_s, b->iteration_time_s);
}

// Transformer Engine's default userbuffers methods (module/base.py,
// initialize_ub): all-gathers run as a ring exchange (qkv_fprop, fc1_fprop,
// proj_dgrad, fc2_dgrad), reduce-scatters as a pipeline (proj_fprop,
// fc2_fprop).
TEST(Sharding, TpCommOverlapRingGathersAndPipelinedReductions) {
  // GEMMs take 1 s, TP collectives `comm_s`, everything else is free.
  class Cost final : public CostModel {
   public:
    explicit Cost(double comm_s) : comm_s_(comm_s) {}
    double kernel_time_s(const KernelDesc& k) const override { return is_gemm(k.kind) ? 1.0 : 0.0; }
    double collective_time_s(const CollectiveDesc&) const override { return comm_s_; }
    double microbatch_overhead_s() const override { return 0.0; }
    double iteration_overhead_s() const override { return 0.0; }
    double comm_compute_slowdown() const override { return 0.1; }
    std::string describe() const override { return "test"; }

   private:
    double comm_s_;
  };
  const Model model = gpt(1, 512, 8, 256, 1000);
  Plan plan = base_plan(2, 1, 1, 1);
  plan.sequence_parallel = true;
  const Cluster cluster = a100_cluster();
  // Paired with a GEMM: 4 per layer and pass (2 gathers, 2 reductions), the
  // logits GEMM's gather (forward) and reduction (backward); the embedding's
  // and cross-entropy's collectives stay exposed. So 5 gathers, 5 reductions.
  // t = 2 chunks. A gather's ring hides all of a 0.5 s collective (each of
  // its steps is shorter than its chunk's 0.5 s GEMM); a pipelined reduction
  // leaves its last chunk, 0.25 s, exposed. At 0.75 s a ring step is longer
  // than its chunk's GEMM by 0.25 s; the pipeline leaves 0.375 + 0 exposed.
  struct Case {
    double comm_s, hidden_s;
  };
  for (const Case& c : {Case{0.5, 5 * 0.5 + 5 * 0.25}, Case{0.75, 5 * 0.5 + 5 * 0.375},
                        Case{1.5, 10 * 0.5}}) {
    const Cost cost(c.comm_s);
    Plan p = plan;
    const ChunkProgram off = lower_chunk(model, p, place(p, cluster), cost, 0);
    p.tp_comm_overlap = true;
    const ChunkProgram on = lower_chunk(model, p, place(p, cluster), cost, 0);
    EXPECT_DOUBLE_EQ(on.tp_hidden_s, c.hidden_s) << c.comm_s;
    EXPECT_DOUBLE_EQ(off.tp_hidden_s, 0);
    // Each pass gets shorter by the hidden time less 10 % of it (SM contention).
    const double saved = off.forward_s + off.backward_s - on.forward_s - on.backward_s;
    EXPECT_NEAR(saved, c.hidden_s * 0.9, 1e-12) << c.comm_s;
    double slowdown = 0;
    for (const auto* ops : {&on.forward, &on.backward}) {
      for (const LoweredOp& op : *ops) slowdown += op.slowdown_s;
    }
    EXPECT_NEAR(slowdown, c.hidden_s * 0.1, 1e-12) << c.comm_s;
  }
}

// Transformer Engine quantizes a linear layer's input (forward) and output
// gradient (backward) before the sequence-parallel all-gather in FP8 and
// NVFP4 training; the embedding's and the logits' gathers stay bf16.
TEST(Sharding, LinearLayerGathersMoveQuantizedData) {
  // Collectives cost 1 ns per byte, everything else nothing.
  class Cost final : public CostModel {
   public:
    double kernel_time_s(const KernelDesc&) const override { return 0.0; }
    double collective_time_s(const CollectiveDesc& c) const override {
      return c.kind == CollectiveKind::kAllGather ? c.bytes * 1e-9 : 0.0;
    }
    double microbatch_overhead_s() const override { return 0.0; }
    double iteration_overhead_s() const override { return 0.0; }
    std::string describe() const override { return "test"; }
  };
  const Model model = gpt(3, 512, 8, 256, 1000);
  Plan plan = base_plan(2, 1, 1, 1);
  plan.sequence_parallel = true;
  const Cluster cluster = a100_cluster();  // placement only: the cost model is the test's
  const Cost cost;
  auto gathered_bytes = [&](const Plan& p) {
    const ChunkProgram prog = lower_chunk(model, p, place(p, cluster), cost, 0);
    double s = 0;
    for (const auto* ops : {&prog.forward, &prog.backward}) {
      for (const LoweredOp& op : *ops) {
        if (op.category == OpCategory::kTensorComm) s += op.duration_s;
      }
    }
    return s * 1e9;
  };
  // T h = 256 x 512 per gather; 4 per layer (QKV and FC1 inputs, the output
  // projection's and FC2's output gradients), 2 more for the embedding and
  // the logits.
  const double th = 256.0 * 512.0;
  const double bf16 = gathered_bytes(plan);
  EXPECT_DOUBLE_EQ(bf16, (3 * 4 + 2) * th * 2);
  struct Case {
    Precision precision;
    Fp8Recipe recipe;
    double bytes_per_element;
  };
  for (const Case& c : {Case{Precision::kFp8, Fp8Recipe::kCurrent, 1.0},
                        Case{Precision::kFp8, Fp8Recipe::kDelayed, 1.0},
                        Case{Precision::kFp8, Fp8Recipe::kMxfp8, 1.0 + 1.0 / 32},
                        Case{Precision::kNvfp4, Fp8Recipe::kDelayed, 0.5 + 1.0 / 16}}) {
    Plan p = plan;
    p.precision = c.precision;
    p.fp8_recipe = c.recipe;
    EXPECT_DOUBLE_EQ(gathered_bytes(p), 3 * 4 * th * c.bytes_per_element + 2 * th * 2)
        << c.bytes_per_element;
  }
}

// Iteration time with and without each overlap: never longer with it, and
// the exposed parts shrink.
TEST(Sharding, OverlapNeverIncreasesIterationTime) {
  const Model model = gpt(16, 2048, 16, 1024, 32000);
  Cluster cluster = a100_cluster();
  cluster.gpus_per_node = 4;  // DP groups cross nodes
  for (int stage : {0, 1, 2, 3}) {
    for (int group : {0, 2}) {
      if (stage == 0 && group != 0) continue;
      Plan plan = base_plan(2, 2, 4, 4);
      plan.sequence_parallel = true;
      plan.zero_stage = stage;
      plan.fsdp_group = group;
      plan.overlap_grad_reduce = false;
      auto slow = simulate(model, plan, cluster);
      ASSERT_TRUE(slow.ok()) << slow.status().message();
      Plan fast_plan = plan;
      fast_plan.overlap_grad_reduce = true;
      fast_plan.overlap_param_gather = true;
      fast_plan.tp_comm_overlap = true;
      auto fast = simulate(model, fast_plan, cluster);
      ASSERT_TRUE(fast.ok());
      const std::string what = "stage " + std::to_string(stage) + " group " + std::to_string(group);
      EXPECT_LE(fast->iteration_time_s, slow->iteration_time_s) << what;
      const StageBreakdown& a = slow->breakdown;
      const StageBreakdown& b = fast->breakdown;
      EXPECT_LT(b.tp_comm_s, a.tp_comm_s) << what;
      EXPECT_GT(b.tp_comm_hidden_s, 0) << what;
      EXPECT_EQ(a.tp_comm_hidden_s, 0) << what;
      EXPECT_GT(b.overlap_slowdown_s, 0) << what;
      EXPECT_EQ(a.overlap_slowdown_s, 0) << what;
      if (stage >= 2) {
        EXPECT_LT(b.fsdp_gather_exposed_s + b.fsdp_reduce_scatter_exposed_s,
                  a.fsdp_gather_exposed_s + a.fsdp_reduce_scatter_exposed_s)
            << what;
      }
      if (stage == 1 || stage == 2) {
        EXPECT_LT(b.dp_exposed_s, a.dp_exposed_s) << what;
      }
      for (const auto* r : {&*slow, &*fast}) {
        for (const StageReport& s : r->stages) {
          EXPECT_NEAR(sum_parts(s.time), s.time.end_s, 1e-9 * s.time.end_s) << what;
        }
      }
    }
  }
}

TEST(Sharding, SmContentionCostsOnlyOverlappedPlans) {
  const Model model = gpt(8, 1024, 16, 512, 5000);
  Cluster free_overlap = a100_cluster();
  free_overlap.gpu.roofline.comm_compute_slowdown = 0;
  const Cluster contended = a100_cluster();
  Plan plain = base_plan(2, 2, 2, 4);
  // Stage 0/1 gradient buckets overlap as before: no contention charged.
  auto a = simulate(model, plain, free_overlap);
  auto b = simulate(model, plain, contended);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->iteration_time_s, b->iteration_time_s);
  Plan overlapped = plain;
  overlapped.tp_comm_overlap = true;
  overlapped.zero_stage = 3;
  overlapped.overlap_param_gather = true;
  auto c = simulate(model, overlapped, free_overlap);
  auto d = simulate(model, overlapped, contended);
  ASSERT_TRUE(c.ok() && d.ok());
  EXPECT_GT(d->iteration_time_s, c->iteration_time_s);
  EXPECT_EQ(c->breakdown.overlap_slowdown_s, 0);
  EXPECT_GT(d->breakdown.overlap_slowdown_s, 0);
}

TEST(Sharding, SameInputsGiveIdenticalReports) {
  const Model model = gpt(8, 1024, 16, 512, 5000);
  const Cluster cluster = a100_cluster();
  Plan plan = base_plan(2, 2, 4, 4);
  plan.zero_stage = 3;
  plan.fsdp_group = 2;
  plan.tp_comm_overlap = true;
  plan.overlap_param_gather = true;
  plan.sequence_parallel = true;
  auto a = simulate(model, plan, cluster);
  auto b = simulate(model, plan, cluster);
  ASSERT_TRUE(a.ok() && b.ok());
  const std::vector<std::string> notes;
  const std::string ja =
      boost::json::serialize(reports::step_report_to_json({model, plan, cluster, *a, notes}));
  const std::string jb =
      boost::json::serialize(reports::step_report_to_json({model, plan, cluster, *b, notes}));
  EXPECT_EQ(ja, jb);
  // The new breakdown keys are there.
  EXPECT_NE(ja.find("\"fsdp_gather_exposed_s\""), std::string::npos);
  EXPECT_NE(ja.find("\"tp_comm_hidden_s\""), std::string::npos);
  // Issue 25: the MFU labelled three ways. A bf16 plan's own peak is the
  // 16-bit peak; model TFLOP/s per GPU is mfu x that peak.
  const boost::json::object o = boost::json::parse(ja).as_object();
  const double mfu = o.at("mfu").as_double();
  EXPECT_DOUBLE_EQ(o.at("mfu_precision_peak").as_double(), mfu);
  EXPECT_NEAR(o.at("model_tflops_per_gpu").as_double(), mfu * cluster.gpu.peak_bf16_flops / 1e12,
              1e-9);
  // An fp8 plan on a GPU with twice the FP8 peak: half the fraction.
  Cluster fp8_cluster = cluster;
  fp8_cluster.gpu.peak_fp8_flops = 2 * cluster.gpu.peak_bf16_flops;
  Plan fp8 = plan;
  fp8.precision = Precision::kFp8;
  auto e = simulate(model, fp8, fp8_cluster);
  ASSERT_TRUE(e.ok()) << e.status().message();
  const boost::json::object f =
      reports::step_report_to_json({model, fp8, fp8_cluster, *e, notes});
  EXPECT_NEAR(f.at("mfu_precision_peak").as_double(), f.at("mfu").as_double() / 2, 1e-12);
}

}  // namespace
}  // namespace llmplan::simulator

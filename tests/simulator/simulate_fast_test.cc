// The fast path of simulate() (passes and pipeline transfers timed directly,
// simulator/simulate.h) against the reference event engine
// (SimOptions::reference_engine: every task and edge in a TaskGraph,
// replayed in a separate pass), on hundreds of plans across the model and
// cluster presets and the plan axes: schedules (1F1B, interleaved, ZB-H1,
// GPipe), ZeRO stages 0-3, hybrid sharding, gradient buckets with and without
// overlap, parameter-gather overlap, context and expert parallelism, fp8.
// Every reported time, memory figure and count must agree within 1e-9
// relative (the two are bit-identical by construction; the tolerance is the
// contract of issue 16).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "planner/search/plan_space.h"
#include "presets/catalog.h"
#include "simulator/roofline.h"
#include "simulator/simulate.h"

namespace llmplan::simulator {
namespace {

bool close(double a, double b) {
  return a == b || std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b));
}

#define EXPECT_CLOSE(a, b, what) EXPECT_TRUE(close(a, b)) << what << ": " << (a) << " vs " << (b)

void expect_same_breakdown(const StageBreakdown& a, const StageBreakdown& b,
                           const std::string& what) {
  EXPECT_CLOSE(a.compute_s, b.compute_s, what + " compute_s");
  EXPECT_CLOSE(a.recompute_s, b.recompute_s, what + " recompute_s");
  EXPECT_CLOSE(a.tp_comm_s, b.tp_comm_s, what + " tp_comm_s");
  EXPECT_CLOSE(a.host_overhead_s, b.host_overhead_s, what + " host_overhead_s");
  EXPECT_CLOSE(a.pp_exposed_s, b.pp_exposed_s, what + " pp_exposed_s");
  EXPECT_CLOSE(a.bubble_s, b.bubble_s, what + " bubble_s");
  EXPECT_CLOSE(a.dp_exposed_s, b.dp_exposed_s, what + " dp_exposed_s");
  EXPECT_CLOSE(a.optimizer_s, b.optimizer_s, what + " optimizer_s");
  EXPECT_CLOSE(a.fp8_cast_s, b.fp8_cast_s, what + " fp8_cast_s");
  EXPECT_CLOSE(a.fsdp_gather_exposed_s, b.fsdp_gather_exposed_s, what + " fsdp_gather");
  EXPECT_CLOSE(a.fsdp_reduce_scatter_exposed_s, b.fsdp_reduce_scatter_exposed_s,
               what + " fsdp_reduce_scatter");
  EXPECT_CLOSE(a.cp_comm_s, b.cp_comm_s, what + " cp_comm_s");
  EXPECT_CLOSE(a.moe_a2a_s, b.moe_a2a_s, what + " moe_a2a_s");
  EXPECT_CLOSE(a.overlap_slowdown_s, b.overlap_slowdown_s, what + " overlap_slowdown_s");
  EXPECT_CLOSE(a.end_s, b.end_s, what + " end_s");
  EXPECT_CLOSE(a.tp_comm_hidden_s, b.tp_comm_hidden_s, what + " tp_comm_hidden_s");
  EXPECT_CLOSE(a.dp_comm_hidden_s, b.dp_comm_hidden_s, what + " dp_comm_hidden_s");
  EXPECT_CLOSE(a.fsdp_hidden_s, b.fsdp_hidden_s, what + " fsdp_hidden_s");
  EXPECT_CLOSE(a.cp_comm_hidden_s, b.cp_comm_hidden_s, what + " cp_comm_hidden_s");
  EXPECT_CLOSE(a.moe_a2a_hidden_s, b.moe_a2a_hidden_s, what + " moe_a2a_hidden_s");
  EXPECT_CLOSE(a.expert_compute_s, b.expert_compute_s, what + " expert_compute_s");
}

// Compares one plan on both engines; returns whether it simulated.
bool expect_same(const Model& model, const Plan& plan, const Cluster& cluster,
                 const std::string& what) {
  SimOptions fast, reference;
  reference.reference_engine = true;
  const Result<StepReport> a = simulate(model, plan, cluster, fast);
  const Result<StepReport> b = simulate(model, plan, cluster, reference);
  EXPECT_EQ(a.ok(), b.ok()) << what << ": " << (a.ok() ? b : a).status().message();
  if (!a.ok() || !b.ok()) {
    if (!a.ok() && !b.ok()) {
      EXPECT_EQ(a.status().message(), b.status().message()) << what;
    }
    return false;
  }
  EXPECT_CLOSE(a->iteration_time_s, b->iteration_time_s, what + " iteration_time_s");
  EXPECT_CLOSE(a->mfu, b->mfu, what + " mfu");
  EXPECT_CLOSE(a->hfu, b->hfu, what + " hfu");
  EXPECT_CLOSE(a->peak_memory_bytes, b->peak_memory_bytes, what + " peak_memory_bytes");
  EXPECT_EQ(a->fits_in_memory, b->fits_in_memory) << what;
  EXPECT_EQ(a->num_tasks, b->num_tasks) << what;
  EXPECT_EQ(a->critical_stage, b->critical_stage) << what;
  EXPECT_EQ(a->caveats, b->caveats) << what;
  EXPECT_EQ(a->stages.size(), b->stages.size()) << what;
  for (size_t r = 0; r < std::min(a->stages.size(), b->stages.size()); ++r) {
    expect_same_breakdown(a->stages[r].time, b->stages[r].time,
                          what + " stage " + std::to_string(r));
    EXPECT_CLOSE(a->stages[r].memory.total_bytes(), b->stages[r].memory.total_bytes(),
                 what + " stage memory");
  }
  return true;
}

std::string describe(const Model& m, const Plan& p, const std::string& cluster) {
  return m.name + " on " + cluster + " t" + std::to_string(p.tensor_parallel) + " p" +
         std::to_string(p.pipeline_parallel) + " v" + std::to_string(p.virtual_stages) + " d" +
         std::to_string(p.data_parallel) + " cp" + std::to_string(p.context_parallel) + " ep" +
         std::to_string(p.expert_parallel) + " b" + std::to_string(p.micro_batch_size) + " B" +
         std::to_string(p.global_batch_size) + " zero" + std::to_string(p.sharding_stage()) +
         " sched" + std::to_string(static_cast<int>(p.schedule));
}

// The plan axes the fast path must treat like the reference: variants of a base plan.
std::vector<Plan> variants(const Plan& base, int gpus_per_node) {
  std::vector<Plan> out = {base};
  Plan p = base;
  p.distributed_optimizer = !base.distributed_optimizer;
  out.push_back(p);
  p = base;
  p.overlap_grad_reduce = !base.overlap_grad_reduce;
  p.grad_bucket_bytes = 40000000;
  out.push_back(p);
  p = base;
  p.zero_stage = 2;
  p.overlap_param_gather = true;
  p.grad_bucket_bytes = 25000000;
  out.push_back(p);
  p = base;
  p.zero_stage = 3;
  out.push_back(p);
  if (base.data_parallel % 2 == 0 && base.data_parallel > 2) {
    p = base;
    p.zero_stage = 1;
    p.fsdp_group = base.data_parallel / 2;  // hybrid sharding
    if (p.fsdp_group * base.tensor_parallel <= gpus_per_node) out.push_back(p);
  }
  if (base.pipeline_parallel > 1 && base.virtual_stages == 1) {
    p = base;
    p.schedule = Schedule::kZbH1;
    out.push_back(p);
    p = base;
    p.schedule = Schedule::kGpipe;
    out.push_back(p);
  }
  return out;
}

TEST(SimulateFastPath, EqualsTheReferenceEngineAcrossPresetsAndPlanAxes) {
  Result<presets::Catalog> catalog = presets::Catalog::builtin();
  ASSERT_TRUE(catalog.ok()) << catalog.status().message();
  std::vector<std::string> models;
  for (const presets::PresetInfo& info : catalog->list()) {
    if (info.kind == presets::PresetKind::kModel) models.push_back(info.name);
  }
  ASSERT_GE(models.size(), 10u);
  int compared = 0;
  for (const char* cluster_name : {"dgx-a100-80gb", "dgx-h100"}) {
    Result<Cluster> cluster = catalog->cluster(cluster_name);
    ASSERT_TRUE(cluster.ok()) << cluster.status().message();
    for (const std::string& name : models) {
      Result<Model> model = catalog->model(name);
      ASSERT_TRUE(model.ok()) << model.status().message();
      for (int gpus : {256}) {
        // One global batch (4M tokens) and micro-batch keep the enumeration short.
        planner::PlanSpace space;
        space.global_batch_tokens = {4194304};
        space.micro_batch = {1, 2};
        std::vector<Plan> plans = planner::enumerate_plans(*model, *cluster, gpus, space);
        // A spread of the enumerated layouts (two or three per model).
        const size_t step = std::max<size_t>(1, plans.size() / 2);
        for (size_t i = 0; i < plans.size(); i += step) {
          for (const Plan& plan : variants(plans[i], cluster->gpus_per_node)) {
            if (expect_same(*model, plan, *cluster, describe(*model, plan, cluster_name))) {
              ++compared;
            }
          }
        }
      }
    }
  }
  // Hundreds of plans, as the issue asks.
  EXPECT_GE(compared, 300);
}

TEST(SimulateFastPath, EqualsTheReferenceOnTheVtrainMtNlgLayout) {
  Result<presets::Catalog> catalog = presets::Catalog::builtin();
  ASSERT_TRUE(catalog.ok());
  Result<Cluster> cluster = catalog->cluster("dgx-a100-80gb");
  ASSERT_TRUE(cluster.ok());
  Result<Model> model = catalog->model("mt-nlg-530b");
  ASSERT_TRUE(model.ok());
  const Model& m = *model;
  Plan p;
  p.tensor_parallel = 8;
  p.data_parallel = 12;
  p.pipeline_parallel = 35;
  p.global_batch_size = 1920;
  p.recompute = Recompute::kFull;
  p.precision = Precision::kFp16;
  EXPECT_TRUE(expect_same(m, p, *cluster, "mt-nlg (8, 12, 35)"));
  p.pipeline_parallel = 7;
  p.virtual_stages = 5;
  p.schedule = Schedule::kInterleaved;
  p.global_batch_size = 1932;  // 161 micro-batches: a multiple of p, as interleaving needs
  EXPECT_TRUE(expect_same(m, p, *cluster, "mt-nlg interleaved"));
}

// zb-h1 on the fast path: with m >= p the lean ordered loop (run_ordered_1f1b
// runs its F and B steps in 1F1B's order, each W after the step it follows),
// with m < p the work list over steps generated from zb_h1_step; with DP
// buckets overlapped (the last W releases them) and not, ZeRO 0-3, a dense
// and a MoE model. Every plan equals the reference engine.
TEST(SimulateFastPath, ZbH1EqualsTheReferenceOnFullAndShortPipelines) {
  Result<presets::Catalog> catalog = presets::Catalog::builtin();
  ASSERT_TRUE(catalog.ok());
  Result<Cluster> cluster = catalog->cluster("dgx-h100");
  ASSERT_TRUE(cluster.ok());
  int compared = 0;
  for (const char* name : {"llama2-7b", "mixtral-8x7b"}) {
    Result<Model> model = catalog->model(name);
    ASSERT_TRUE(model.ok()) << name << ": " << model.status().message();
    for (int p : {2, 4}) {
      // m = B / (b d): below p, equal to p, and many more.
      for (int m : {1, 3, 4, 5, 16, 37}) {
        Plan base;
        base.tensor_parallel = 4;
        base.pipeline_parallel = p;
        base.data_parallel = 4;
        base.global_batch_size = m * base.data_parallel;
        base.schedule = Schedule::kZbH1;
        if (model->is_moe()) base.expert_parallel = 2;
        std::vector<Plan> seen;  // variants() repeats the base as its zb-h1 variant
        for (const Plan& plan : variants(base, cluster->gpus_per_node)) {
          if (plan.schedule != Schedule::kZbH1 ||
              std::find(seen.begin(), seen.end(), plan) != seen.end()) {
            continue;
          }
          seen.push_back(plan);
          if (expect_same(*model, plan, *cluster, describe(*model, plan, "dgx-h100"))) ++compared;
        }
      }
    }
  }
  // 2 models x 2 pipeline depths x 6 micro-batch counts x 6 variants.
  EXPECT_EQ(compared, 2 * 2 * 6 * 6);
}

// A SimSetup (cluster validated and cost model built once, shared by many
// simulations) gives the report simulate() gives from the cluster itself,
// and rejects an invalid cluster with simulate()'s error.
TEST(SimulateFastPath, SharedSetUpGivesTheSameReport) {
  Result<presets::Catalog> catalog = presets::Catalog::builtin();
  ASSERT_TRUE(catalog.ok());
  Result<Cluster> cluster = catalog->cluster("dgx-a100-80gb");
  ASSERT_TRUE(cluster.ok());
  Result<Model> model = catalog->model("mt-nlg-530b");
  ASSERT_TRUE(model.ok());
  Result<SimSetup> setup = SimSetup::make(*cluster);
  ASSERT_TRUE(setup.ok());
  EXPECT_TRUE(setup->roofline());
  Plan p;
  p.tensor_parallel = 8;
  p.data_parallel = 12;
  p.pipeline_parallel = 35;
  p.global_batch_size = 1920;
  p.recompute = Recompute::kFull;
  p.precision = Precision::kFp16;
  for (Schedule s : {Schedule::kOneFOneB, Schedule::kZbH1}) {
    p.schedule = s;
    const Result<StepReport> a = simulate(*model, p, *cluster);
    const Result<StepReport> b = simulate(*model, p, *setup);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->iteration_time_s, b->iteration_time_s);
    EXPECT_EQ(a->peak_memory_bytes, b->peak_memory_bytes);
    EXPECT_EQ(a->num_tasks, b->num_tasks);
    EXPECT_EQ(a->caveats, b->caveats);
    EXPECT_EQ(a->cost_model, b->cost_model);
    expect_same_breakdown(a->breakdown, b->breakdown, "setup");
  }
  Cluster bad = *cluster;
  bad.gpus_per_node = 0;
  const Result<SimSetup> rejected = SimSetup::make(bad);
  ASSERT_FALSE(rejected.ok());
  const Result<StepReport> direct = simulate(*model, p, bad);
  ASSERT_FALSE(direct.ok());
  EXPECT_EQ(rejected.status().message(), direct.status().message());
}

TEST(SimulateFastPath, ReportsABadDurationLikeTheReference) {
  // A cost model that gives NaN for pipeline transfers: both engines name it.
  class NanSends : public CostModel {
   public:
    explicit NanSends(const Cluster& c) : roofline_(c) {}
    double kernel_time_s(const KernelDesc& k) const override { return roofline_.kernel_time_s(k); }
    double collective_time_s(const CollectiveDesc& c) const override {
      return c.kind == CollectiveKind::kSendRecv ? std::nan("") : roofline_.collective_time_s(c);
    }
    double microbatch_overhead_s() const override { return roofline_.microbatch_overhead_s(); }
    double iteration_overhead_s() const override { return roofline_.iteration_overhead_s(); }
    std::string describe() const override { return "nan-sends"; }

   private:
    Roofline roofline_;
  };
  Result<presets::Catalog> catalog = presets::Catalog::builtin();
  ASSERT_TRUE(catalog.ok());
  Result<Cluster> cluster = catalog->cluster("dgx-a100-80gb");
  Result<Model> model = catalog->model("gpt3-175b");
  ASSERT_TRUE(cluster.ok() && model.ok());
  Plan p;
  p.tensor_parallel = 8;
  p.pipeline_parallel = 8;
  p.data_parallel = 2;
  p.global_batch_size = 64;
  SimOptions fast, reference;
  fast.cost_model = reference.cost_model = std::make_shared<NanSends>(*cluster);
  reference.reference_engine = true;
  const Result<StepReport> a = simulate(*model, p, *cluster, fast);
  const Result<StepReport> b = simulate(*model, p, *cluster, reference);
  ASSERT_FALSE(a.ok());
  ASSERT_FALSE(b.ok());
  EXPECT_NE(a.status().message().find("NaN"), std::string::npos) << a.status().message();
  EXPECT_NE(b.status().message().find("NaN"), std::string::npos) << b.status().message();
}

}  // namespace
}  // namespace llmplan::simulator

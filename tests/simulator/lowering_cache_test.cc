// The lowering cache (simulator/lowering_cache.h): its key holds every plan
// field lower_chunk() reads, and pass times served from it equal freshly
// lowered ones, bit for bit, on one thread and many.
//  - Every field lowering_key_plan() resets, changed alone, leaves every
//    chunk's lowered program equal op for op (so the key is not too small).
//  - A shared cache serves plans that differ only in fields the lowering
//    reads (micro-batch, schedule, recompute, precision, ZeRO-2/3 with
//    another d, ...) one after another: a key missing such a field would
//    hand a plan another plan's pass times, and the comparison with a fresh
//    lowering (==) would fail.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "planner/search/plan_space.h"
#include "presets/catalog.h"
#include "simulator/lowering.h"
#include "simulator/lowering_cache.h"
#include "simulator/roofline.h"
#include "tests/simulator/test_models.h"
#include "tests/simulator/test_presets.h"

namespace llmplan::simulator {
namespace {

// Whether two lowered programs are equal in every field the simulator reads.
bool same_program(const ChunkProgram& a, const ChunkProgram& b) {
  auto same_ops = [](const std::vector<LoweredOp>& x, const std::vector<LoweredOp>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      const LoweredOp &p = x[i], &q = y[i];
      if (p.stream != q.stream || p.category != q.category || p.duration_s != q.duration_s ||
          p.flops != q.flops || std::string(p.name) != q.name ||
          p.grad_ready_bytes != q.grad_ready_bytes || p.slowdown_s != q.slowdown_s ||
          p.gemm != q.gemm || p.weight_grad != q.weight_grad || p.tp_pair != q.tp_pair ||
          p.expert != q.expert || p.expert_grad_ready_bytes != q.expert_grad_ready_bytes) {
        return false;
      }
    }
    return true;
  };
  auto same_collectives = [](const std::vector<PassCollective>& x,
                             const std::vector<PassCollective>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i].kind != y[i].kind || x[i].bytes != y[i].bytes || x[i].time_s != y[i].time_s) {
        return false;
      }
    }
    return true;
  };
  return a.chunk == b.chunk && a.layers == b.layers && same_ops(a.forward, b.forward) &&
         same_ops(a.backward, b.backward) && a.forward_s == b.forward_s &&
         a.backward_s == b.backward_s && a.split_backward == b.split_backward &&
         same_ops(a.backward_input, b.backward_input) &&
         same_ops(a.backward_weight, b.backward_weight) &&
         a.backward_input_s == b.backward_input_s && a.backward_weight_s == b.backward_weight_s &&
         a.parameters == b.parameters && a.grad_bytes == b.grad_bytes &&
         a.expert_grad_bytes == b.expert_grad_bytes && a.layer_parameters == b.layer_parameters &&
         a.activation_send_bytes == b.activation_send_bytes && a.tp_hidden_s == b.tp_hidden_s &&
         a.fsdp_hidden_s == b.fsdp_hidden_s && a.cp_hidden_s == b.cp_hidden_s &&
         a.moe_a2a_hidden_s == b.moe_a2a_hidden_s && a.expert_parameters == b.expert_parameters &&
         same_collectives(a.forward_collectives, b.forward_collectives) &&
         same_collectives(a.backward_collectives, b.backward_collectives);
}

struct Case {
  Model model;
  Plan plan;
  std::string what;
};

// Plans of every preset model on an H100 cluster: a spread of the planner's
// plan space (1F1B, zb-h1, interleaved), each with variants that change one
// field the lowering reads.
std::vector<Case> cases(const Cluster& cluster) {
  Result<presets::Catalog> catalog = presets::Catalog::builtin();
  EXPECT_TRUE(catalog.ok());
  std::vector<Case> out;
  if (!catalog.ok()) return out;
  for (const presets::PresetInfo& info : catalog->list()) {
    if (info.kind != presets::PresetKind::kModel) continue;
    Result<Model> model = catalog->model(info.name);
    if (!model.ok()) continue;
    planner::PlanSpace space;
    space.global_batch_tokens = {1048576, 4194304};
    space.micro_batch = {1, 2};
    space.schedule = {Schedule::kOneFOneB, Schedule::kZbH1, Schedule::kInterleaved};
    const std::vector<Plan> plans = planner::enumerate_plans(*model, cluster, 256, space);
    const size_t step = std::max<size_t>(1, plans.size() / 8);
    for (size_t i = 0; i < plans.size(); i += step) {
      const Plan& base = plans[i];
      std::vector<std::pair<std::string, Plan>> variants = {{"base", base}};
      auto add = [&](const std::string& what, auto change) {
        Plan v = base;
        change(v);
        if (validate(*model, v).ok() && check_precision(v, cluster.gpu).ok()) {
          variants.emplace_back(what, v);
        }
      };
      add("micro_batch", [](Plan& v) { v.micro_batch_size *= 2; });
      add("recompute", [](Plan& v) {
        v.recompute = v.recompute == Recompute::kFull ? Recompute::kNone : Recompute::kFull;
      });
      add("selective", [](Plan& v) { v.recompute = Recompute::kSelective; });
      add("schedule", [](Plan& v) {
        if (v.virtual_stages == 1) {
          v.schedule = v.schedule == Schedule::kZbH1 ? Schedule::kOneFOneB : Schedule::kZbH1;
        }
      });
      add("precision", [](Plan& v) {
        v.precision = v.precision == Precision::kBf16 ? Precision::kFp8 : Precision::kBf16;
      });
      add("fp8_recipe", [](Plan& v) {
        v.precision = Precision::kFp8;
        v.fp8_recipe = Fp8Recipe::kCurrent;
      });
      add("tp_comm_overlap", [](Plan& v) { v.tp_comm_overlap = !v.tp_comm_overlap; });
      add("sequence_parallel", [](Plan& v) { v.sequence_parallel = !v.sequence_parallel; });
      add("grad_reduce_in_fp32", [](Plan& v) { v.grad_reduce_in_fp32 = !v.grad_reduce_in_fp32; });
      add("flash_attention", [](Plan& v) { v.flash_attention = !v.flash_attention; });
      add("scatter_gather", [](Plan& v) { v.pipeline_scatter_gather = !v.pipeline_scatter_gather; });
      add("bf16_layers", [](Plan& v) {
        v.precision = Precision::kFp8;
        v.bf16_layers_at_start = 1;
        v.bf16_layers_at_end = 1;
      });
      // ZeRO-2/3: the shard group (d, fsdp_group) and the overlap flags are read.
      for (int stage : {2, 3}) {
        add("zero" + std::to_string(stage), [&](Plan& v) { v.zero_stage = stage; });
        add("zero" + std::to_string(stage) + " d/2", [&](Plan& v) {
          v.zero_stage = stage;
          v.data_parallel /= 2;
          v.global_batch_size /= 2;
        });
        add("zero" + std::to_string(stage) + " fsdp_group 2", [&](Plan& v) {
          v.zero_stage = stage;
          v.fsdp_group = 2;
        });
        add("zero" + std::to_string(stage) + " overlaps", [&](Plan& v) {
          v.zero_stage = stage;
          v.overlap_grad_reduce = !v.overlap_grad_reduce;
          v.overlap_param_gather = !v.overlap_param_gather;
        });
      }
      if (model->is_moe()) {
        add("ep", [](Plan& v) { v.expert_parallel = std::max(1, v.expert_parallel / 2); });
        add("moe_a2a_overlap", [](Plan& v) { v.moe_a2a_overlap = !v.moe_a2a_overlap; });
        add("moe_imbalance", [](Plan& v) { v.moe_imbalance = 1.25; });
        add("moe_flex_dispatcher", [](Plan& v) { v.moe_flex_dispatcher = !v.moe_flex_dispatcher; });
        add("recompute_modules", [](Plan& v) {
          if (v.recompute != Recompute::kFull) {
            v.recompute_modules = kRecomputeMoeAct | kRecomputeLayernorm;
          }
        });
      }
      if (model->is_mla()) {
        add("mla_up_proj", [](Plan& v) {
          if (v.recompute != Recompute::kFull) v.recompute_modules = kRecomputeMlaUpProj;
        });
      }
      add("cp", [](Plan& v) {
        v.context_parallel = 2;
        v.data_parallel = std::max(1, v.data_parallel / 2);
        v.global_batch_size = v.data_parallel * v.micro_batch_size * v.num_micro_batches();
      });
      for (auto& [what, plan] : variants) out.push_back({*model, plan, info.name + " " + what});
    }
  }
  return out;
}

// The stage's chunks as lowered_lower_bound_s lowers them: chunk 1 (or the
// last of two) and its interleaved companions; plus the first and the last.
std::vector<int> chunks_of(const Plan& plan) {
  const int p = plan.pipeline_parallel, n = p * plan.virtual_stages;
  std::vector<int> out = {0, n - 1};
  for (int c = (n >= 3 ? 1 : n - 1) % p; c < n; c += p) out.push_back(c);
  return out;
}

Cluster h100() { return testing::preset_cluster("dgx-h100"); }

TEST(LoweringKeyPlan, ResetFieldsLeaveEveryLoweredChunkEqual) {
  const Cluster cluster = h100();
  const Roofline cost(cluster);
  int compared = 0;
  for (const Case& c : cases(cluster)) {
    // Each reset field changed alone (ZeRO-0/1 fields only below ZeRO-2).
    std::vector<std::pair<std::string, Plan>> changed;
    auto add = [&](const std::string& what, auto change) {
      Plan v = c.plan;
      change(v);
      ASSERT_EQ(lowering_key_plan(v), lowering_key_plan(c.plan)) << c.what << " " << what;
      if (validate(c.model, v).ok()) changed.emplace_back(what, v);
    };
    add("global_batch", [](Plan& v) { v.global_batch_size *= 2; });
    add("grad_bucket_bytes", [](Plan& v) { v.grad_bucket_bytes = 40000000; });
    add("dropout", [](Plan& v) { v.dropout = !v.dropout; });
    add("fused_cross_entropy", [](Plan& v) { v.fused_cross_entropy = !v.fused_cross_entropy; });
    add("cpu_offload_v1", [](Plan& v) { v.cpu_offload_v1 = !v.cpu_offload_v1; });
    if (c.plan.sharding_stage() < 2) {
      add("data_parallel", [](Plan& v) {
        v.data_parallel *= 2;
        v.global_batch_size *= 2;
      });
      add("fsdp_group", [](Plan& v) {
        v.distributed_optimizer = true;
        v.fsdp_group = v.data_parallel % 2 == 0 ? 2 : 0;
      });
      add("zero 0/1", [](Plan& v) {
        v.zero_stage = v.sharding_stage() == 1 ? 0 : 1;
        v.distributed_optimizer = false;
      });
      add("overlap_grad_reduce", [](Plan& v) { v.overlap_grad_reduce = !v.overlap_grad_reduce; });
      add("overlap_param_gather",
          [](Plan& v) { v.overlap_param_gather = !v.overlap_param_gather; });
    }
    const Placement placement = place(c.plan, cluster);
    for (const auto& [what, v] : changed) {
      const Placement vp = place(v, cluster);
      for (int chunk : chunks_of(c.plan)) {
        EXPECT_TRUE(same_program(lower_chunk(c.model, c.plan, placement, cost, chunk),
                                 lower_chunk(c.model, v, vp, cost, chunk)))
            << c.what << ": " << what << " changed chunk " << chunk;
        ++compared;
      }
    }
  }
  EXPECT_GE(compared, 5000);
}

TEST(LoweringKeyPlan, KeepsWhatTheLoweringReads) {
  Plan a = testing::layout_plan(2, 1, 4, 64);
  a.zero_stage = 3;
  Plan b = a;
  b.data_parallel = 2;  // ZeRO-3 shards over d: another program
  EXPECT_NE(lowering_key_plan(a), lowering_key_plan(b));
  b = a;
  b.micro_batch_size = 2;
  EXPECT_NE(lowering_key_plan(a), lowering_key_plan(b));
  b = a;
  b.schedule = Schedule::kZbH1;  // split backward
  EXPECT_NE(lowering_key_plan(a), lowering_key_plan(b));
  b = a;
  b.global_batch_size = 128;
  EXPECT_EQ(lowering_key_plan(a), lowering_key_plan(b));
}

TEST(LoweringCache, SharedPassTimesEqualFreshLoweringsOnOneThreadAndMany) {
  const Cluster cluster = h100();
  const Roofline cost(cluster);
  const std::vector<Case> all = cases(cluster);
  ASSERT_GE(all.size(), 1000u);
  // Fresh lowerings, then the same through one cache serially and, with a
  // second cache, on 4 threads; then every case again (all hits).
  const long n = static_cast<long>(all.size());
  std::vector<std::vector<ChunkPassTimes>> fresh(n), serial(n), threaded(n), again(n);
  LoweringCache cache, shared;
  for (long i = 0; i < n; ++i) {
    const Placement pl = place(all[i].plan, cluster);
    for (int c : chunks_of(all[i].plan)) {
      fresh[i].push_back(pass_times_of(lower_chunk(all[i].model, all[i].plan, pl, cost, c)));
      serial[i].push_back(cache.pass_times(all[i].model, all[i].plan, pl, cost, c));
    }
  }
#pragma omp parallel for num_threads(4) schedule(dynamic, 1)
  for (long i = 0; i < n; ++i) {
    const Placement pl = place(all[i].plan, cluster);
    for (int c : chunks_of(all[i].plan)) {
      threaded[i].push_back(shared.pass_times(all[i].model, all[i].plan, pl, cost, c));
    }
  }
  const LoweringCache::Stats first = cache.stats();
  for (long i = 0; i < n; ++i) {
    const Placement pl = place(all[i].plan, cluster);
    for (int c : chunks_of(all[i].plan)) {
      again[i].push_back(chunk_pass_times(&cache, all[i].model, all[i].plan, pl, cost, c));
    }
  }
  for (long i = 0; i < n; ++i) {
    EXPECT_TRUE(serial[i] == fresh[i]) << all[i].what;
    EXPECT_TRUE(threaded[i] == fresh[i]) << all[i].what;
    EXPECT_TRUE(again[i] == fresh[i]) << all[i].what;
  }
  // The chunks asked for twice per plan (first and last of one chunk) and
  // the repeated pass hit; the variants miss.
  const LoweringCache::Stats second = cache.stats();
  EXPECT_GT(first.hits, 0);
  EXPECT_GT(first.misses, first.hits);
  EXPECT_EQ(second.misses, first.misses);
  EXPECT_EQ(second.entries, first.entries);
  EXPECT_GT(second.hits, first.hits + n);
}

TEST(LoweringCache, PlansDifferingOnlyInBatchOrWidthShareAChunk) {
  const Cluster cluster = h100();
  const Roofline cost(cluster);
  const Model model = testing::preset_model("gpt3-175b");
  Plan plan = testing::layout_plan(8, 8, 4, 512);
  plan.distributed_optimizer = true;
  LoweringCache cache;
  const ChunkPassTimes a = cache.pass_times(model, plan, place(plan, cluster), cost, 1);
  Plan wider = plan;
  wider.data_parallel = 16;
  wider.global_batch_size = 1024;
  const ChunkPassTimes b = cache.pass_times(model, wider, place(wider, cluster), cost, 1);
  EXPECT_TRUE(a == b);
  EXPECT_EQ(cache.stats().hits, 1);
  EXPECT_EQ(cache.stats().misses, 1);
  EXPECT_EQ(cache.stats().models, 1);
}

TEST(LoweringCache, DropsTheOldestEntriesPastItsBound) {
  const Cluster cluster = h100();
  const Roofline cost(cluster);
  const Model model = testing::preset_model("gpt3-175b");
  const Plan plan = testing::layout_plan(8, 8, 1, 64);
  LoweringCache cache(/*max_entries=*/2);
  const Placement pl = place(plan, cluster);
  const ChunkPassTimes c0 = cache.pass_times(model, plan, pl, cost, 0);
  cache.pass_times(model, plan, pl, cost, 1);
  cache.pass_times(model, plan, pl, cost, 7);  // drops chunk 0
  EXPECT_EQ(cache.stats().entries, 2);
  EXPECT_EQ(cache.stats().dropped, 1);
  EXPECT_TRUE(cache.pass_times(model, plan, pl, cost, 0) == c0);  // lowered again, equal
  EXPECT_EQ(cache.stats().misses, 4);
  EXPECT_EQ(cache.stats().hits, 0);
}

}  // namespace
}  // namespace llmplan::simulator

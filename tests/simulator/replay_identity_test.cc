// The fast path's lean pipeline replays (simulate_fast.cc: run_ordered_1f1b
// for 1F1B and zb-h1 with m >= p, run by levels of independent rounds;
// run_listed_sweeps for interleaved and GPipe) against the reference event
// engine, bit for bit: every reported time, memory figure and count must be
// equal (==), not just close, since the replays do the engine's arithmetic
// operation for operation and only change the order of independent steps.
// Plans: every model preset on two clusters, the planner's plan space at a
// few batch sizes (so m ranges from below p to many times p) with the
// schedules 1F1B, zb-h1, interleaved and GPipe, and ZeRO / bucket variants.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "planner/search/plan_space.h"
#include "presets/catalog.h"
#include "simulator/simulate.h"
#include "tests/simulator/test_breakdown.h"
#include "tests/simulator/test_presets.h"

namespace llmplan::simulator {
namespace {

// Whether `plan` simulated on both engines; every field compared with ==.
bool expect_identical(const Model& model, const Plan& plan, const Cluster& cluster,
                      const std::string& what) {
  SimOptions reference;
  reference.reference_engine = true;
  const Result<StepReport> a = simulate(model, plan, cluster);
  const Result<StepReport> b = simulate(model, plan, cluster, reference);
  EXPECT_EQ(a.ok(), b.ok()) << what;
  if (!a.ok() || !b.ok()) return false;
  EXPECT_EQ(a->iteration_time_s, b->iteration_time_s) << what;
  EXPECT_EQ(a->mfu, b->mfu) << what;
  EXPECT_EQ(a->peak_memory_bytes, b->peak_memory_bytes) << what;
  testing::expect_same_stages(*a, *b, what, /*exact=*/true);
  return true;
}

std::string describe(const Model& m, const Plan& p) {
  return m.name + " t" + std::to_string(p.tensor_parallel) + " p" +
         std::to_string(p.pipeline_parallel) + " v" + std::to_string(p.virtual_stages) + " d" +
         std::to_string(p.data_parallel) + " m" + std::to_string(p.num_micro_batches()) +
         " zero" + std::to_string(p.sharding_stage()) + " sched" +
         std::to_string(static_cast<int>(p.schedule)) + " overlap" +
         std::to_string(p.overlap_grad_reduce);
}

TEST(ReplayIdentity, LeanReplaysEqualTheReferenceEngineBitForBit) {
  int compared = 0, ordered = 0, listed = 0;
  for (const auto& [cluster_name, cluster, model] :
       testing::every_model_preset_on({"dgx-a100-80gb", "dgx-h100"})) {
    planner::PlanSpace space;
    space.global_batch_tokens = {1048576, 8388608};
    space.micro_batch = {1};
    space.schedule = {Schedule::kOneFOneB, Schedule::kZbH1, Schedule::kInterleaved};
    std::vector<Plan> plans = planner::enumerate_plans(model, cluster, 128, space);
    // A spread of the enumerated plans, with pipelines.
    std::vector<Plan> picked;
    for (const Plan& plan : plans) {
      if (plan.pipeline_parallel > 1) picked.push_back(plan);
    }
    const size_t step = std::max<size_t>(1, picked.size() / 6);
    for (size_t i = 0; i < picked.size(); i += step) {
      std::vector<Plan> variants = {picked[i]};
      Plan v = picked[i];
      v.overlap_grad_reduce = !v.overlap_grad_reduce;
      v.grad_bucket_bytes = 20000000;
      variants.push_back(v);
      v = picked[i];
      v.zero_stage = 3;
      variants.push_back(v);
      if (picked[i].virtual_stages == 1) {
        v = picked[i];
        v.schedule = Schedule::kGpipe;
        variants.push_back(v);
      }
      for (const Plan& plan : variants) {
        if (!expect_identical(model, plan, cluster, describe(model, plan) + " " +
                                                          cluster_name)) {
          continue;
        }
        ++compared;
        const bool one_f_one_b =
            plan.schedule == Schedule::kOneFOneB || plan.schedule == Schedule::kZbH1;
        if (one_f_one_b && plan.num_micro_batches() >= plan.pipeline_parallel) ++ordered;
        if (!one_f_one_b) ++listed;
      }
    }
  }
  // Hundreds of plans, both lean replays well covered.
  EXPECT_GE(compared, 800) << ordered << " " << listed;
  EXPECT_GE(ordered, 400);
  EXPECT_GE(listed, 350);
}

}  // namespace
}  // namespace llmplan::simulator

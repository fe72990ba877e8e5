// memory_canonical_plan (planner/search/plan_space.h): the planner's memory
// estimate runs on a plan with fewer micro-batches; stage_memory must give
// the same bytes, field by field, on both, for every schedule whose in-flight
// counts it shortens, on every preset model (dense, MoE, MLA, hybrid Mamba).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "planner/search/plan_space.h"
#include "presets/catalog.h"
#include "simulator/memory.h"
#include "simulator/plan.h"

namespace llmplan::planner {
namespace {

using simulator::Plan;
using simulator::Schedule;

const presets::Catalog& catalog() {
  static const presets::Catalog c = presets::Catalog::builtin().value();
  return c;
}

void expect_same(const std::vector<simulator::MemoryBreakdown>& a,
                 const std::vector<simulator::MemoryBreakdown>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t r = 0; r < a.size(); ++r) {
    const simulator::MemoryBreakdown &x = a[r], &y = b[r];
    EXPECT_EQ(x.parameters, y.parameters) << what << " stage " << r;
    EXPECT_EQ(x.weights_and_optimizer_bytes, y.weights_and_optimizer_bytes) << what << " stage " << r;
    EXPECT_EQ(x.sharded_working_bytes, y.sharded_working_bytes) << what << " stage " << r;
    EXPECT_EQ(x.activation_bytes, y.activation_bytes) << what << " stage " << r;
    EXPECT_EQ(x.recompute_bytes, y.recompute_bytes) << what << " stage " << r;
    EXPECT_EQ(x.context_parallel_bytes, y.context_parallel_bytes) << what << " stage " << r;
    EXPECT_EQ(x.moe_buffer_bytes, y.moe_buffer_bytes) << what << " stage " << r;
    EXPECT_EQ(x.logits_bytes, y.logits_bytes) << what << " stage " << r;
    EXPECT_EQ(x.fragmentation_bytes, y.fragmentation_bytes) << what << " stage " << r;
    EXPECT_EQ(x.reserved_bytes, y.reserved_bytes) << what << " stage " << r;
    EXPECT_EQ(x.in_flight_micro_batches, y.in_flight_micro_batches) << what << " stage " << r;
  }
}

TEST(MemoryCanonicalPlan, SameStageMemoryOnEverySchedulePipelineAndMicroBatchCount) {
  struct Sched {
    Schedule schedule;
    int v;
  };
  const Sched scheds[] = {{Schedule::kOneFOneB, 1}, {Schedule::kZbH1, 1}, {Schedule::kInterleaved, 2},
                          {Schedule::kInterleaved, 3}, {Schedule::kInterleaved, 4}};
  long compared = 0, shortened = 0;
  for (const presets::PresetInfo& info : catalog().list()) {
    if (info.kind != presets::PresetKind::kModel) continue;
    const simulator::Model model = catalog().model(info.name).value();
    for (const Sched& s : scheds) {
      for (int p : {2, 3, 4, 5, 8, 16}) {
        // Past every bound M of plan_space.h (interleaved: at most 3p).
        for (int m = 1; m <= 4 * p + 3; ++m) {
          Plan plan;
          plan.pipeline_parallel = p;
          plan.virtual_stages = s.v;
          plan.schedule = s.schedule;
          plan.data_parallel = 2;
          plan.micro_batch_size = 1;
          plan.global_batch_size = 2 * m;
          plan.distributed_optimizer = (m % 2) == 0;
          plan.recompute = (m % 3) == 0 ? simulator::Recompute::kFull : simulator::Recompute::kNone;
          if (model.is_moe()) plan.expert_parallel = 2;
          if (!simulator::validate(plan).ok() || !simulator::validate(model, plan).ok()) continue;
          const Plan canon = memory_canonical_plan(plan);
          EXPECT_LE(canon.num_micro_batches(), m);
          ASSERT_TRUE(simulator::validate(model, canon).ok()) << info.name;
          Plan rest = canon;
          rest.global_batch_size = plan.global_batch_size;
          EXPECT_EQ(rest, plan) << "only the global batch changes";
          shortened += canon.num_micro_batches() < m ? 1 : 0;
          const std::vector<double> params = simulator::stage_parameters_per_device(model, plan);
          expect_same(simulator::stage_memory(model, plan, params, 0.0),
                      simulator::stage_memory(model, canon, params, 0.0),
                      info.name + " schedule " + std::to_string(static_cast<int>(s.schedule)) +
                          " v" + std::to_string(s.v) + " p" + std::to_string(p) + " m" +
                          std::to_string(m));
          ++compared;
        }
      }
    }
  }
  EXPECT_GT(compared, 2000);
  EXPECT_GT(shortened, 1000);
}

TEST(MemoryCanonicalPlan, KeepsGPipeAndShortPipelinesUnchanged) {
  Plan plan;
  plan.pipeline_parallel = 4;
  plan.data_parallel = 1;
  plan.micro_batch_size = 1;
  plan.global_batch_size = 64;
  plan.schedule = Schedule::kGpipe;  // every forward in flight: m matters
  EXPECT_EQ(memory_canonical_plan(plan), plan);
  plan.schedule = Schedule::kOneFOneB;
  EXPECT_EQ(memory_canonical_plan(plan).num_micro_batches(), 4);  // M = p
  plan.schedule = Schedule::kZbH1;
  EXPECT_EQ(memory_canonical_plan(plan).num_micro_batches(), 5);  // M = p + 1
  plan.schedule = Schedule::kInterleaved;
  plan.virtual_stages = 2;
  // W = 2 (p - 1) + (v - 1) p = 10 > 2p v = 16? no: M = 2p = 8 (8 x 2 > 10).
  EXPECT_EQ(memory_canonical_plan(plan).num_micro_batches(), 8);
  plan.global_batch_size = 8;
  EXPECT_EQ(memory_canonical_plan(plan), plan);  // m <= M
}

}  // namespace
}  // namespace llmplan::planner

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
#include "tests/simulator/test_breakdown.h"
#include "tests/simulator/test_models.h"
#include "tests/simulator/test_presets.h"

namespace llmplan::simulator {
namespace {

using testing::close;

#define EXPECT_CLOSE(a, b, what) EXPECT_TRUE(close(a, b)) << what << ": " << (a) << " vs " << (b)

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
  EXPECT_EQ(a->caveats, b->caveats) << what;
  testing::expect_same_stages(*a, *b, what, /*exact=*/false);
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
  int compared = 0;
  for (const auto& [cluster_name, cluster, model] :
       testing::every_model_preset_on({"dgx-a100-80gb", "dgx-h100"})) {
    for (int gpus : {256}) {
      // One global batch (4M tokens) and micro-batch keep the enumeration short.
      planner::PlanSpace space;
      space.global_batch_tokens = {4194304};
      space.micro_batch = {1, 2};
      std::vector<Plan> plans = planner::enumerate_plans(model, cluster, gpus, space);
      // A spread of the enumerated layouts (two or three per model).
      const size_t step = std::max<size_t>(1, plans.size() / 2);
      for (size_t i = 0; i < plans.size(); i += step) {
        for (const Plan& plan : variants(plans[i], cluster.gpus_per_node)) {
          if (expect_same(model, plan, cluster, describe(model, plan, cluster_name))) {
            ++compared;
          }
        }
      }
    }
  }
  // Hundreds of plans, as the issue asks.
  EXPECT_GE(compared, 300);
}

TEST(SimulateFastPath, EqualsTheReferenceOnTheVtrainMtNlgLayout) {
  const Cluster cluster = testing::preset_cluster("dgx-a100-80gb");
  const Model m = testing::preset_model("mt-nlg-530b");
  Plan p = testing::mt_nlg_plan();
  EXPECT_TRUE(expect_same(m, p, cluster, "mt-nlg (8, 12, 35)"));
  p.pipeline_parallel = 7;
  p.virtual_stages = 5;
  p.schedule = Schedule::kInterleaved;
  p.global_batch_size = 1932;  // 161 micro-batches: a multiple of p, as interleaving needs
  EXPECT_TRUE(expect_same(m, p, cluster, "mt-nlg interleaved"));
}

// zb-h1 on the fast path: with m >= p the lean ordered loop (run_ordered_1f1b
// runs its F and B steps in 1F1B's order, each W after the step it follows),
// with m < p the work list over steps generated from zb_h1_step; with DP
// buckets overlapped (the last W releases them) and not, ZeRO 0-3, a dense
// and a MoE model. Every plan equals the reference engine.
TEST(SimulateFastPath, ZbH1EqualsTheReferenceOnFullAndShortPipelines) {
  const presets::Catalog catalog = testing::builtin_catalog();
  Result<Cluster> cluster = catalog.cluster("dgx-h100");
  ASSERT_TRUE(cluster.ok());
  int compared = 0;
  for (const char* name : {"llama2-7b", "mixtral-8x7b"}) {
    Result<Model> model = catalog.model(name);
    ASSERT_TRUE(model.ok()) << name << ": " << model.status().message();
    for (int p : {2, 4}) {
      // m = B / (b d): below p, equal to p, and many more.
      for (int m : {1, 3, 4, 5, 16, 37}) {
        Plan base = testing::layout_plan(4, p, 4, m * 4);  // m = B / (b d) with b 1, d 4
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
  const Cluster cluster = testing::preset_cluster("dgx-a100-80gb");
  const Model model = testing::preset_model("mt-nlg-530b");
  Result<SimSetup> setup = SimSetup::make(cluster);
  ASSERT_TRUE(setup.ok());
  EXPECT_TRUE(setup->roofline());
  Plan p = testing::mt_nlg_plan();
  for (Schedule s : {Schedule::kOneFOneB, Schedule::kZbH1}) {
    p.schedule = s;
    const Result<StepReport> a = simulate(model, p, cluster);
    const Result<StepReport> b = simulate(model, p, *setup);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->iteration_time_s, b->iteration_time_s);
    EXPECT_EQ(a->peak_memory_bytes, b->peak_memory_bytes);
    EXPECT_EQ(a->num_tasks, b->num_tasks);
    EXPECT_EQ(a->caveats, b->caveats);
    EXPECT_EQ(a->cost_model, b->cost_model);
    testing::expect_close_breakdown(a->breakdown, b->breakdown, "setup");
  }
  Cluster bad = cluster;
  bad.gpus_per_node = 0;
  const Result<SimSetup> rejected = SimSetup::make(bad);
  ASSERT_FALSE(rejected.ok());
  const Result<StepReport> direct = simulate(model, p, bad);
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
  const Cluster cluster = testing::preset_cluster("dgx-a100-80gb");
  const Model model = testing::preset_model("gpt3-175b");
  const Plan p = testing::layout_plan(8, 8, 2, 64);
  SimOptions fast, reference;
  fast.cost_model = reference.cost_model = std::make_shared<NanSends>(cluster);
  reference.reference_engine = true;
  const Result<StepReport> a = simulate(model, p, cluster, fast);
  const Result<StepReport> b = simulate(model, p, cluster, reference);
  ASSERT_FALSE(a.ok());
  ASSERT_FALSE(b.ok());
  EXPECT_NE(a.status().message().find("NaN"), std::string::npos) << a.status().message();
  EXPECT_NE(b.status().message().find("NaN"), std::string::npos) << b.status().message();
}

}  // namespace
}  // namespace llmplan::simulator

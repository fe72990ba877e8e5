// The search's pruning (planner/search/prune.h): the iteration-time lower
// bound never exceeds the simulated time, and the pruned search returns the
// exhaustive search's answer, candidates and the answer's plans.
#include "planner/search/prune.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "planner/search/search.h"
#include "tests/planner/search_fixtures.h"
#include "presets/catalog.h"
#include "simulator/roofline.h"
#include "simulator/simulate.h"

namespace llmplan::planner {
namespace {

const presets::Catalog& catalog() {
  static const presets::Catalog c = presets::Catalog::builtin().value();
  return c;
}

std::vector<std::string> model_presets() {
  std::vector<std::string> names;
  for (const presets::PresetInfo& p : catalog().list()) {
    if (p.kind == presets::PresetKind::kModel) names.push_back(p.name);
  }
  return names;
}

// Every plan of `plans` simulated: the bound is at most the simulated time
// (the bounds carry their own rounding slack). Returns how many were checked.
int interleaved_checked = 0;  // of those checked, interleaved (v > 1) plans

int check_plans(const simulator::Model& m, const std::vector<simulator::Plan>& plans,
                const simulator::Cluster& cluster, double* worst_ratio) {
  int checked = 0;
  for (const simulator::Plan& p : plans) {
    auto rep = simulator::simulate(m, p, cluster);
    if (!rep.ok()) continue;
    const double bound = iteration_time_lower_bound_s(m, p, cluster);
    EXPECT_GT(bound, 0) << m.name;
    EXPECT_LE(bound, rep.value().iteration_time_s)
        << m.name << " on " << cluster.name << " t" << p.tensor_parallel << " p"
        << p.pipeline_parallel << " d" << p.data_parallel << " v" << p.virtual_stages;
    const simulator::Roofline roofline(cluster);
    const double lowered = lowered_lower_bound_s(m, p, cluster, roofline);
    EXPECT_GT(lowered, 0) << m.name;
    EXPECT_LE(lowered, rep.value().iteration_time_s)
        << m.name << " on " << cluster.name << " t" << p.tensor_parallel << " p"
        << p.pipeline_parallel << " d" << p.data_parallel << " v" << p.virtual_stages
        << " schedule " << static_cast<int>(p.schedule) << " zero " << p.zero_stage;
    const double stage = stage_lower_bound_s(m, p, cluster, roofline);
    EXPECT_GT(stage, 0) << m.name;
    EXPECT_LE(stage, lowered * (1 + 1e-12)) << m.name;
    *worst_ratio = std::max(*worst_ratio, lowered / rep.value().iteration_time_s);
    ++checked;
    interleaved_checked += p.virtual_stages > 1 ? 1 : 0;
  }
  return checked;
}

// Every preset model on A100, H100, B200 and GB200 NVL72 clusters, a spread
// of its automatic plans plus the same layouts under ZB-H1, interleaving and
// ZeRO 2/3 where they apply.
TEST(IterationTimeLowerBound, AtMostSimulatedOnEveryPresetModel) {
  int checked = 0;
  double worst = 0;
  for (const char* cluster_name : {"dgx-a100-80gb", "dgx-h100", "dgx-b200", "gb200-nvl72"}) {
    const simulator::Cluster cluster = catalog().cluster(cluster_name).value();
    for (const std::string& name : model_presets()) {
      const simulator::Model m = catalog().model(name).value();
      PlanSpace space;
      space.global_batch_tokens = {4194304.0};
      space.schedule = {simulator::Schedule::kOneFOneB, simulator::Schedule::kZbH1};
      space.zero_stage = {1, 3};
      space.recompute = {simulator::Recompute::kNone, simulator::Recompute::kFull};
      std::vector<simulator::Plan> all = enumerate_plans(m, cluster, 512, space);
      std::vector<simulator::Plan> some;
      const size_t step = std::max<size_t>(1, all.size() / 8);
      for (size_t i = 0; i < all.size(); i += step) some.push_back(all[i]);
      checked += check_plans(m, some, cluster, &worst);
    }
  }
  EXPECT_GT(checked, 300);
  // The lowered bound sums an interleaved stage's v chunks: many of them.
  EXPECT_GT(interleaved_checked, 50);
  if (std::getenv("LLMPLAN_PRINT_BOUND")) {
    std::printf("checked %d (%d interleaved) worst bound/sim %.3f\n", checked, interleaved_checked, worst);
  }
}

// Random dense and MoE shapes of the families' templates, random plans of
// their automatic space on 64-1024 GPUs: both bounds at most the simulated
// time (a fixed seed: the same cases every run).
TEST(IterationTimeLowerBound, AtMostSimulatedOnRandomShapesAndPlans) {
  std::mt19937 rng(30);
  const char* clusters[] = {"dgx-a100-80gb", "dgx-h100", "dgx-b200", "gb200-nvl72"};
  int checked = 0;
  double worst = 0;
  for (int k = 0; k < 40; ++k) {
    const simulator::Cluster cluster = catalog().cluster(clusters[rng() % 4]).value();
    const double params = std::exp(std::uniform_real_distribution<double>(std::log(2e8), std::log(4e11))(rng));
    const bool moe = rng() % 3 == 0;
    const simulator::Model m =
        moe ? moe_shape_for_active(params / 8, family_template(Family::kMoe),
                                   moe_shape_configs()[rng() % moe_shape_configs().size()])
            : shape_for_params(params, family_template(rng() % 2 ? Family::kGpt : Family::kLlama));
    PlanSpace space;
    space.global_batch_tokens = {std::ldexp(1.0, 20 + static_cast<int>(rng() % 5))};
    space.schedule = {simulator::Schedule::kOneFOneB, simulator::Schedule::kZbH1};
    const int gpus = 64 << (rng() % 5);
    std::vector<simulator::Plan> all = enumerate_plans(m, cluster, gpus, space);
    if (all.empty()) continue;
    std::vector<simulator::Plan> some;
    for (int j = 0; j < 4; ++j) some.push_back(all[rng() % all.size()]);
    checked += check_plans(m, some, cluster, &worst);
  }
  EXPECT_GT(checked, 60);
}

// Pipelined plans built by hand with large bubbles (m from 1 to 2p, often m
// = p) on every preset model: every schedule (GPipe, 1F1B, zb-h1,
// interleaved with v = 2), p = 2 .. 16, dense and MoE (ep = 8), with and
// without context parallelism and full recomputation, on an H100 and an A100
// cluster. The lowered bound is at most the simulated time, and its fill and
// drain raise it strictly above the busiest stage's work (the bound before
// the bubble term); with m = p under 1F1B and GPipe by at least a fifth
// (the bubble is (p - 1) / m of the work there).
TEST(IterationTimeLowerBound, PipelineFillAndDrainTightenLargeBubbles) {
  int checked = 0, by_schedule[4] = {0, 0, 0, 0};
  double worst = 0, least_gain = 1e9;
  for (const char* cluster_name : {"dgx-h100", "dgx-a100-80gb"}) {
    const simulator::Cluster cluster = catalog().cluster(cluster_name).value();
    const simulator::Roofline roofline(cluster);
    for (const std::string& name : model_presets()) {
      const simulator::Model model = catalog().model(name).value();
      for (int p : {2, 3, 4, 8, 16}) {
        for (simulator::Schedule schedule :
             {simulator::Schedule::kGpipe, simulator::Schedule::kOneFOneB,
              simulator::Schedule::kZbH1, simulator::Schedule::kInterleaved}) {
          for (int m : {1, p - 1, p, p + 1, 2 * p}) {
            if (m < 1) continue;
            const bool interleaved = schedule == simulator::Schedule::kInterleaved;
            if (interleaved && m % p != 0) continue;
            const int variant = (p + m + static_cast<int>(schedule)) % 3;
            simulator::Plan plan;
            plan.tensor_parallel = 8;
            plan.pipeline_parallel = p;
            plan.data_parallel = 2;
            plan.context_parallel = variant == 1 ? 2 : 1;
            plan.micro_batch_size = 1;
            plan.global_batch_size = m * plan.data_parallel;
            plan.schedule = schedule;
            plan.virtual_stages = interleaved ? 2 : 1;
            plan.sequence_parallel = true;
            plan.distributed_optimizer = true;
            plan.recompute = variant == 2 ? simulator::Recompute::kFull : simulator::Recompute::kNone;
            if (model.is_moe()) {
              plan.expert_parallel = 8;
              plan.expert_tensor_parallel = 1;
            }
            if (!simulator::validate(model, plan).ok()) continue;
            auto rep = simulator::simulate(model, plan, cluster);
            if (!rep.ok()) continue;
            const double sim = rep.value().iteration_time_s;
            const LoweredBound b = lowered_bound(model, plan, cluster, roofline);
            const std::string what = name + " on " + cluster.name + " p" + std::to_string(p) +
                                     " m" + std::to_string(m) + " cp" +
                                     std::to_string(plan.context_parallel) + " schedule " +
                                     simulator::to_string(schedule);
            // The FLOP bound's pipeline factor (1F1B, GPipe): at most the
            // simulated time, and above the same plan's bound without it (zb-h1
            // keeps g = 1; the model FLOPs are the same).
            const double flop_bound = iteration_time_lower_bound_s(model, plan, cluster);
            EXPECT_LE(flop_bound, sim) << what;
            if (schedule == simulator::Schedule::kGpipe ||
                schedule == simulator::Schedule::kOneFOneB) {
              simulator::Plan flat = plan;
              flat.schedule = simulator::Schedule::kZbH1;
              EXPECT_GT(flop_bound, iteration_time_lower_bound_s(model, flat, cluster)) << what;
            }
            EXPECT_GT(b.busiest_stage_s, 0) << what;
            // The search's cheaper first step: one stage, at most the busiest.
            const double stage = stage_lower_bound_s(model, plan, cluster, roofline);
            EXPECT_GT(stage, 0) << what;
            EXPECT_LE(stage, b.busiest_stage_s * (1 + 1e-12)) << what;
            EXPECT_LE(b.pipeline_s, sim) << what;
            EXPECT_EQ(lowered_lower_bound_s(model, plan, cluster, roofline), b.pipeline_s) << what;
            // Strictly tighter than the busiest stage alone: the fill is at
            // least chunk 0's forward.
            EXPECT_GT(b.pipeline_s, b.busiest_stage_s * (1 + 1e-6)) << what;
            if (m == p && (schedule == simulator::Schedule::kGpipe ||
                           schedule == simulator::Schedule::kOneFOneB)) {
              EXPECT_GT(b.pipeline_s, 1.2 * b.busiest_stage_s) << what;
              least_gain = std::min(least_gain, b.pipeline_s / b.busiest_stage_s);
            }
            worst = std::max(worst, b.pipeline_s / sim);
            ++checked;
            ++by_schedule[static_cast<int>(schedule)];
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 500);
  for (int n : by_schedule) EXPECT_GT(n, 60);
  if (std::getenv("LLMPLAN_PRINT_BOUND")) {
    std::printf("checked %d (gpipe %d, 1f1b %d, interleaved %d, zb-h1 %d) worst bound/sim %.4f, "
                "least gain at m = p %.3f\n",
                checked, by_schedule[0], by_schedule[1], by_schedule[2], by_schedule[3], worst,
                least_gain);
  }
}

SearchOptions options(double days, Objective objective, Family family) {
  return fixtures::pruning_question(days, objective, family);
}

// The pruned search against --exhaustive: the same answer, every
// candidate's best plan and its numbers, the answer's plans; simulated plus
// pruned plans are every enumerated plan; fewer simulations.
TEST(PrunedSearch, SameAnswerAsExhaustive) {
  const simulator::Cluster cluster = catalog().cluster("dgx-h100").value();
  for (const SearchOptions& base :
       {options(10, Objective::kLargest, Family::kGpt), options(20, Objective::kLoss, Family::kLlama)}) {
    SearchOptions ex = base;
    ex.exhaustive = true;
    SearchOptions exact = base;  // every row optimised (answer_pruning_test.cc: the default)
    exact.exact_rows = true;
    const SearchResult a = search(cluster, exact).value();
    const SearchResult b = search(cluster, ex).value();
    EXPECT_TRUE(a.pruning_off.empty());
    EXPECT_EQ(b.pruning_off, "--exhaustive");
    EXPECT_EQ(b.plans_pruned_deadline + b.plans_pruned_incumbent, 0);
    EXPECT_EQ(a.plans_evaluated + a.plans_pruned_deadline + a.plans_pruned_incumbent,
              b.plans_evaluated);
    EXPECT_LT(a.plans_evaluated, b.plans_evaluated);
    ASSERT_EQ(a.best, b.best);
    ASSERT_GE(a.best, 0);
    ASSERT_EQ(a.candidates.size(), b.candidates.size());
    for (size_t s = 0; s < a.candidates.size(); ++s) {
      const Candidate& x = a.candidates[s];
      const Candidate& y = b.candidates[s];
      EXPECT_EQ(x.model, y.model);
      EXPECT_EQ(x.feasible, y.feasible) << s;
      EXPECT_EQ(x.why, y.why) << s;
      EXPECT_EQ(x.days, y.days) << s;
      EXPECT_EQ(x.cost_usd, y.cost_usd) << s;
      EXPECT_EQ(x.loss, y.loss) << s;
      ASSERT_EQ(x.best_plan >= 0, y.best_plan >= 0);
      if (x.best_plan >= 0) {
        EXPECT_EQ(a.plans[x.best_plan].plan, b.plans[y.best_plan].plan) << s;
      }
    }
    // The answer's model: every plan, in the same order.
    EXPECT_EQ(fixtures::answer_plans(a), fixtures::answer_plans(b));
    EXPECT_EQ(a.naive_days, b.naive_days);
  }
}

// A measured cost model is not covered by the proof: every plan simulated.
TEST(PrunedSearch, ProfileCostModelFallsBackToExhaustive) {
  SearchOptions o = options(20, Objective::kLargest, Family::kGpt);
  o.cost_model = std::make_shared<simulator::Roofline>(catalog().cluster("dgx-h100").value());
  EXPECT_FALSE(pruning_unsafe_reason(o).empty());
  o.cost_model = nullptr;
  EXPECT_TRUE(pruning_unsafe_reason(o).empty());
  o.exhaustive = true;
  EXPECT_EQ(pruning_unsafe_reason(o), "--exhaustive");
}

}  // namespace
}  // namespace llmplan::planner

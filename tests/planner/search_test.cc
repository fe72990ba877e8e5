#include "planner/search/search.h"

#include <gtest/gtest.h>

#include <limits>
#include <set>

#include "presets/catalog.h"
#include "tests/planner/search_fixtures.h"

namespace llmplan::planner {
namespace {

simulator::Cluster a100() { return fixtures::builtin_cluster("dgx-a100-80gb"); }

scaling::LossLaw law() { return fixtures::chinchilla_test_law(); }

simulator::Model small(int layers, int hidden) {
  simulator::Model m;
  m.name = "small";
  m.num_layers = layers;
  m.hidden_size = hidden;
  m.num_heads = hidden / 128;
  m.seq_length = 1024;
  m.vocab_size = 32000;
  return m;
}

TEST(ParetoFront, HandKnown) {
  // (time, cost): 0:(1,10) 1:(2,5) 2:(3,6) dominated by 1, 3:(4,1), 4:(2,5) duplicate of 1.
  const std::vector<int> f = pareto_front({1, 2, 3, 4, 2}, {10, 5, 6, 1, 5});
  EXPECT_EQ(f, (std::vector<int>{0, 1, 3}));
  EXPECT_TRUE(pareto_front({}, {}).empty());
}

TEST(ShapeForParams, HeadDim128AndNearSize) {
  for (double n : {1e9, 7e9, 70e9, 175e9}) {
    const simulator::Model m = shape_for_params(n, 2048, 51200);
    EXPECT_EQ(m.head_dim(), 128);
    EXPECT_NEAR(static_cast<double>(m.parameter_count()) / n, 1.0, 0.25) << n;
    if (m.hidden_size >= 2048) {
      EXPECT_EQ(m.hidden_size % 1024, 0);
    }
  }
}

// A synthetic result: three shapes, plans with hand-set throughput.
SearchResult synthetic() {
  SearchResult r;
  for (double n : {1e9, 2e9, 4e9}) {
    Candidate c;
    c.params = n;
    r.candidates.push_back(c);
  }
  auto plan = [&](int shape, double tokens_per_s, int gpus, bool fits) {
    PlanResult p;
    p.shape = shape;
    p.tokens_per_s = tokens_per_s;
    p.gpus_used = gpus;
    p.fits = fits;
    r.plans.push_back(p);
  };
  // 20 tokens/param: 20e9, 40e9, 80e9 tokens. One day = 86400 s.
  plan(0, 20e9 / 86400 / 0.5, 8, true);  // shape 0: 0.5 days on 8 GPUs
  plan(1, 40e9 / 86400 / 2.0, 16, true);  // shape 1: 2 days on 16 GPUs
  plan(1, 40e9 / 86400 / 0.9, 32, true);  // shape 1: 0.9 days on 32 GPUs
  plan(2, 80e9 / 86400 / 0.1, 8, false);  // shape 2: fast but does not fit
  plan(2, 80e9 / 86400 / 3.0, 32, true);  // shape 2: 3 days
  return r;
}

TEST(Select, LargestWithinDeadline) {
  simulator::Cluster c = a100();
  c.usd_per_gpu_hour = 1.0;
  SearchOptions o;
  o.days = 1.0;
  o.law = law();
  SearchResult r = synthetic();
  select(c, o, &r);
  EXPECT_EQ(r.best, 1);
  EXPECT_EQ(r.candidates[1].best_plan, 2);  // the 0.9-day plan
  EXPECT_NEAR(r.candidates[1].days, 0.9, 1e-9);
  EXPECT_NEAR(r.candidates[1].cost_usd, 0.9 * 24 * 32, 1e-6);
  EXPECT_EQ(r.candidates[2].why, "deadline");
  o.days = 3.5;
  select(c, o, &r);
  EXPECT_EQ(r.best, 2);
  EXPECT_EQ(r.candidates[2].best_plan, 4);  // the one that does not fit is skipped
}

TEST(Select, BudgetPicksCheaperPlanOrSmallerModel) {
  simulator::Cluster c = a100();
  c.usd_per_gpu_hour = 1.0;
  SearchOptions o;
  o.days = 2.5;
  o.law = law();
  o.budget_usd = 800;  // shape 1: 2 d x 16 = 768 $ ok; 0.9 d x 32 = 691 $ ok; shape 2 = 2304 $
  SearchResult r = synthetic();
  select(c, o, &r);
  EXPECT_EQ(r.best, 1);
  o.budget_usd = 50;  // only shape 0: 0.5 d x 8 x 24 = 96 $ > 50: nothing
  select(c, o, &r);
  EXPECT_EQ(r.best, -1);
}

TEST(Select, LossObjectiveUsesDeadlineTokens) {
  simulator::Cluster c = a100();
  SearchOptions o;
  o.days = 1.0;
  o.law = law();
  o.objective = Objective::kLoss;
  SearchResult r = synthetic();
  select(c, o, &r);
  ASSERT_GE(r.best, 0);
  for (const Candidate& cand : r.candidates) {
    if (cand.feasible) {
      EXPECT_LE(r.candidates[r.best].loss, cand.loss);
    }
  }
  // Shape 0 at 1 day trains 2 x 20e9 tokens.
  EXPECT_NEAR(r.candidates[0].tokens, 40e9, 1e3);
}

SearchOptions small_search(int threads) {
  SearchOptions o;
  o.gpus = 16;
  o.days = 1.0;
  o.law = law();
  o.threads = threads;
  o.shape_template = family_template(Family::kGpt, 1024, 32000);
  o.space.global_batch_tokens = {256 * 1024};
  o.shapes = {small(4, 512), small(8, 1024), small(12, 2048)};
  return o;
}

TEST(Search, IdenticalForOneAndTwoThreads) {
  const simulator::Cluster c = a100();
  auto one = search(c, small_search(1));
  auto two = search(c, small_search(2));
  ASSERT_TRUE(one.ok()) << one.status().message();
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(one.value().best, two.value().best);
  EXPECT_EQ(one.value().plans_evaluated, two.value().plans_evaluated);
  ASSERT_EQ(one.value().plans.size(), two.value().plans.size());
  for (size_t i = 0; i < one.value().plans.size(); ++i) {
    EXPECT_EQ(one.value().plans[i].plan, two.value().plans[i].plan);
    EXPECT_EQ(one.value().plans[i].iteration_time_s, two.value().plans[i].iteration_time_s);
  }
  EXPECT_EQ(one.value().naive_days, two.value().naive_days);
  EXPECT_GE(one.value().best, 0);
}

// Issue 13: with the sharding and overlap axes searched (every ZeRO stage,
// hybrid groups, the overlap flags) on the calibrated H100, the planner's
// answer and every simulated plan are the same on one and two threads.
TEST(Search, ShardingAxesIdenticalForOneAndTwoThreads) {
  const simulator::Cluster c = presets::Catalog::builtin().value().cluster("dgx-h100").value();
  auto options = [](int threads) {
    SearchOptions o = small_search(threads);
    o.space.zero_stage = {0, 1, 2, 3};
    o.space.fsdp_group = {8};
    o.space.tp_comm_overlap = Choice::kBoth;
    o.space.overlap_param_gather = Choice::kBoth;
    return o;
  };
  auto one = search(c, options(1));
  auto two = search(c, options(2));
  ASSERT_TRUE(one.ok()) << one.status().message();
  ASSERT_TRUE(two.ok()) << two.status().message();
  ASSERT_EQ(one.value().plans.size(), two.value().plans.size());
  std::set<int> stages;
  for (size_t i = 0; i < one.value().plans.size(); ++i) {
    EXPECT_EQ(one.value().plans[i].plan, two.value().plans[i].plan);
    EXPECT_EQ(one.value().plans[i].iteration_time_s, two.value().plans[i].iteration_time_s);
    EXPECT_EQ(one.value().plans[i].peak_memory_bytes, two.value().plans[i].peak_memory_bytes);
    stages.insert(one.value().plans[i].plan.sharding_stage());
  }
  EXPECT_EQ(stages, (std::set<int>{0, 1, 2, 3}));
  EXPECT_EQ(one.value().best, two.value().best);
  EXPECT_GE(one.value().best, 0);
}

TEST(Search, BadInputsAreOneLineErrors) {
  const simulator::Cluster c = a100();
  SearchOptions o = small_search(1);
  o.gpus = 0;
  EXPECT_FALSE(search(c, o).ok());
  o = small_search(1);
  o.days = -1;
  EXPECT_NE(search(c, o).status().message().find("--days"), std::string::npos);
  o = small_search(1);
  o.gpus = 4;  // fewer than one 8-GPU node
  EXPECT_NE(search(c, o).status().message().find("--gpus"), std::string::npos);
  o = small_search(1);
  o.budget_usd = 0.01;  // too small for any model: a report, not an error
  auto r = search(c, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().best, -1);
}

// Issue 17, defect 2: a deadline of 1e308 days overflowed the compute
// budget to infinity and the shape grid never ended.
TEST(Search, BudgetsThatOverflowAreErrorsAndTheGridIsFinite) {
  const simulator::Cluster c = a100();
  SearchOptions o = small_search(1);
  o.gpus = 512;
  o.days = 1e308;
  EXPECT_NE(search(c, o).status().message().find("--days: the compute budget"), std::string::npos);
  o = small_search(1);
  o.budget_usd = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(search(c, o).status().message().find("--budget-usd"), std::string::npos);
  o = small_search(1);
  o.tokens.tokens_per_param = std::numeric_limits<double>::infinity();
  EXPECT_NE(search(c, o).status().message().find("--tokens-per-param"), std::string::npos);
  o = small_search(1);
  o.gpus = simulator::Plan::kMaxGpus + 8;
  EXPECT_NE(search(c, o).status().message().find("--gpus: must be at most"), std::string::npos);
  // The grid: empty for non-finite bounds, at most kMaxGridSizes sizes for
  // finite ones however far apart (the largest sizes share one shape).
  EXPECT_TRUE(shape_grid(1e8, std::numeric_limits<double>::infinity(), 1.6, family_template(Family::kGpt)).empty());
  const auto grid = shape_grid(1e8, 1e300, 1.07, family_template(Family::kGpt));
  EXPECT_FALSE(grid.empty());
  EXPECT_LE(grid.size(), static_cast<size_t>(kMaxGridSizes));
  for (const simulator::Model& m : grid) EXPECT_TRUE(simulator::validate(m).ok()) << m.name;
}

}  // namespace
}  // namespace llmplan::planner

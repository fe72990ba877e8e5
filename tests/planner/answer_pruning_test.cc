// Issue 30's objective-aware search over sizes (search.h: answer_pruning_reason,
// SearchOptions::exact_rows, SearchOptions::answer_only): a model that ranks
// below a feasible model stops at its first feasible plan, and the frontier's
// answer-only search also skips plans that cannot be feasible. Each is checked
// against --exhaustive on the same question.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "planner/search/objective.h"
#include "planner/search/search.h"
#include "planner/search/shapes.h"
#include "presets/catalog.h"
#include "tests/planner/search_fixtures.h"

namespace llmplan::planner {
namespace {

const presets::Catalog& catalog() {
  static const presets::Catalog c = presets::Catalog::builtin().value();
  return c;
}

SearchOptions question(double days, Objective objective, Family family, int gpus = 64) {
  return fixtures::pruning_question(days, objective, family, gpus);
}

struct Runs {
  SearchResult by_default, exhaustive;
};

Runs run_both(const simulator::Cluster& cluster, const SearchOptions& o) {
  SearchOptions ex = o;
  ex.exhaustive = true;
  return {search(cluster, o).value(), search(cluster, ex).value()};
}

// The default search: the same answer, best plan, days and every plan of the
// answer's model; optimised rows identical; stopped rows feasible, ranked
// below the answer, with days at least the exhaustive row's; every
// enumerated plan is simulated or counted under one pruning reason.
TEST(AnswerPruning, StoppedRowsAreFeasibleUpperBoundsAndTheAnswerIsExact) {
  const simulator::Cluster cluster = catalog().cluster("dgx-h100").value();
  int stopped_total = 0;
  for (const SearchOptions& o : {question(10, Objective::kLargest, Family::kGpt),
                                 question(5, Objective::kLargest, Family::kMoe)}) {
    ASSERT_EQ(answer_pruning_reason(o, {}), "");
    const Runs r = run_both(cluster, o);
    const SearchResult& a = r.by_default;
    const SearchResult& b = r.exhaustive;
    EXPECT_EQ(a.plans_evaluated + a.plans_pruned_deadline + a.plans_pruned_incumbent +
                  a.plans_pruned_answer,
              b.plans_evaluated);
    EXPECT_EQ(b.plans_pruned_answer, 0);
    ASSERT_GE(b.best, 0);
    ASSERT_EQ(a.best, b.best);
    ASSERT_EQ(a.candidates.size(), b.candidates.size());
    const Candidate& answer = b.candidates[b.best];
    EXPECT_TRUE(a.candidates[a.best].optimised);
    EXPECT_EQ(a.plans[a.candidates[a.best].best_plan].plan,
              b.plans[answer.best_plan].plan);
    int stopped = 0;
    for (size_t s = 0; s < a.candidates.size(); ++s) {
      const Candidate& x = a.candidates[s];
      const Candidate& y = b.candidates[s];
      ASSERT_EQ(x.model, y.model);
      EXPECT_EQ(x.feasible, y.feasible) << s;
      EXPECT_EQ(x.why, y.why) << s;
      EXPECT_EQ(x.loss, y.loss) << s;
      if (x.optimised) {
        EXPECT_EQ(x.days, y.days) << s;
        EXPECT_EQ(x.cost_usd, y.cost_usd) << s;
        continue;
      }
      ++stopped;
      EXPECT_TRUE(x.feasible) << s;
      EXPECT_GE(x.days, y.days) << s;
      // Only a model that ranks below the answer stops early.
      EXPECT_TRUE(x.params < answer.params || x.loss > answer.loss) << s;
    }
    EXPECT_EQ(stopped > 0, a.plans_pruned_answer > 0);
    stopped_total += stopped;
    EXPECT_EQ(fixtures::answer_plans(a), fixtures::answer_plans(b));
    EXPECT_EQ(a.naive_days, b.naive_days);
  }
  // The questions have models below their answers: the stop must act.
  EXPECT_GT(stopped_total, 3);
}

// --exact-rows: no model stops early (the whole result as --exhaustive's is
// checked by prune_test.cc and planner.prune_identity).
TEST(AnswerPruning, ExactRowsOptimisesEveryRow) {
  const simulator::Cluster cluster = catalog().cluster("dgx-h100").value();
  SearchOptions o = question(10, Objective::kLargest, Family::kGpt);
  o.exact_rows = true;
  EXPECT_EQ(answer_pruning_reason(o, {}), "--exact-rows");
  const SearchResult a = search(cluster, o).value();
  EXPECT_EQ(a.plans_pruned_answer, 0);
  for (const Candidate& c : a.candidates) EXPECT_TRUE(c.optimised);
}

// Where a model's rank depends on its plan, or shapes are ranked by different
// keys, the stop is off.
TEST(AnswerPruning, OffWhereTheRankDependsOnThePlan) {
  SearchOptions loss = question(10, Objective::kLoss, Family::kLlama);
  EXPECT_NE(answer_pruning_reason(loss, {}), "");  // tokens trained to the deadline
  loss.training.tokens = 1e12;
  EXPECT_EQ(answer_pruning_reason(loss, {}), "");  // fixed tokens: loss is the model's
  SearchOptions unique = question(10, Objective::kLargest, Family::kLlama);
  unique.training.unique_tokens = 1e11;
  EXPECT_NE(answer_pruning_reason(unique, {}), "");
  SearchOptions ex = question(10, Objective::kLargest, Family::kGpt);
  ex.exhaustive = true;
  EXPECT_EQ(answer_pruning_reason(ex, {}), "--exhaustive");
  // A dense and a MoE shape under `largest`: compared by different keys.
  const SearchOptions mixed = question(10, Objective::kLargest, Family::kGpt);
  const std::vector<simulator::Model> shapes = {
      shape_for_params(1e9, family_template(Family::kGpt)),
      moe_shape_for_active(1e9, family_template(Family::kMoe), moe_shape_configs().front())};
  EXPECT_NE(answer_pruning_reason(mixed, shapes), "");
  EXPECT_EQ(answer_pruning_reason(mixed, {shapes[0]}), "");
}

// The frontier's answer-only search: the answer, its best plan and every
// model's feasibility and reason as --exhaustive's, with fewer simulations
// than the default search.
TEST(AnswerPruning, AnswerOnlyKeepsTheAnswerFeasibilityAndReasons) {
  const simulator::Cluster cluster = catalog().cluster("dgx-h100").value();
  for (const SearchOptions& base : {question(10, Objective::kLargest, Family::kGpt),
                                    question(1, Objective::kLargest, Family::kLlama, 1024)}) {
    SearchOptions o = base;
    o.answer_only = true;
    const Runs r = run_both(cluster, o);
    const SearchResult by_default = search(cluster, base).value();
    const SearchResult& a = r.by_default;
    const SearchResult& b = r.exhaustive;
    ASSERT_EQ(a.best, b.best);
    ASSERT_EQ(a.candidates.size(), b.candidates.size());
    if (b.best >= 0) {
      EXPECT_EQ(a.plans[a.candidates[a.best].best_plan].plan,
                b.plans[b.candidates[b.best].best_plan].plan);
      EXPECT_EQ(a.candidates[a.best].days, b.candidates[b.best].days);
    }
    for (size_t s = 0; s < a.candidates.size(); ++s) {
      EXPECT_EQ(a.candidates[s].feasible, b.candidates[s].feasible) << s;
      EXPECT_EQ(a.candidates[s].why, b.candidates[s].why) << s;
    }
    EXPECT_LT(a.plans_evaluated, by_default.plans_evaluated);
  }
}

}  // namespace
}  // namespace llmplan::planner

// EnumerationCache (planner/search/enumeration_cache.h): searches sharing a
// cache (as the frontier's cells do) return exactly what they return alone,
// and the shared enumerations are served from it.
#include "planner/search/enumeration_cache.h"

#include <gtest/gtest.h>

#include <memory>

#include "planner/search/search.h"
#include "tests/planner/search_fixtures.h"

namespace llmplan::planner {
namespace {

void expect_same(const SearchResult& a, const SearchResult& b) {
  EXPECT_EQ(a.best, b.best);
  ASSERT_EQ(a.candidates.size(), b.candidates.size());
  for (size_t i = 0; i < a.candidates.size(); ++i) {
    const Candidate &x = a.candidates[i], &y = b.candidates[i];
    EXPECT_EQ(x.model, y.model);
    EXPECT_EQ(x.best_plan, y.best_plan);
    EXPECT_EQ(x.days, y.days);
    EXPECT_EQ(x.cost_usd, y.cost_usd);
    EXPECT_EQ(x.why, y.why);
    EXPECT_EQ(x.layouts, y.layouts);
    EXPECT_EQ(x.memory_pruned, y.memory_pruned);
    EXPECT_EQ(x.plans_evaluated, y.plans_evaluated);
  }
  ASSERT_EQ(a.plans.size(), b.plans.size());
  for (size_t i = 0; i < a.plans.size(); ++i) {
    EXPECT_EQ(a.plans[i].plan, b.plans[i].plan);
    EXPECT_EQ(a.plans[i].iteration_time_s, b.plans[i].iteration_time_s);
  }
  EXPECT_EQ(a.plans_pruned_deadline, b.plans_pruned_deadline);
  EXPECT_EQ(a.plans_pruned_incumbent, b.plans_pruned_incumbent);
}

TEST(EnumerationCache, SharedBySearchesOfOneClusterWithoutChangingThem) {
  const simulator::Cluster cluster = fixtures::builtin_cluster("dgx-h100");
  auto cache = std::make_shared<EnumerationCache>();
  long searches = 0;
  for (double days : {1.0, 4.0}) {
    for (double budget : {0.0, 5000.0}) {  // a budget widens the space (every_width)
      for (bool exhaustive : {false}) {
        SearchOptions alone = fixtures::small_h100_options();
        alone.days = days;
        alone.budget_usd = budget;
        alone.exhaustive = exhaustive;
        SearchOptions shared = alone;
        shared.enumeration_cache = cache;
        auto a = search(cluster, alone);
        auto b = search(cluster, shared);
        ASSERT_TRUE(a.ok() && b.ok());
        expect_same(a.value(), b.value());
        ++searches;
      }
    }
  }
  EXPECT_EQ(searches, 4);
  EXPECT_GT(cache->misses(), 0);
  // The second deadline's shapes (same width rule) were served.
  EXPECT_GT(cache->hits(), 0);
}

}  // namespace
}  // namespace llmplan::planner

// Shared set-up of the planner's search tests: built-in cluster presets,
// the Chinchilla constants as a test law, and a small plan space that
// searches in seconds.
#ifndef LLMPLAN_TESTS_PLANNER_SEARCH_FIXTURES_H_
#define LLMPLAN_TESTS_PLANNER_SEARCH_FIXTURES_H_

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "planner/search/search.h"
#include "presets/catalog.h"
#include "scaling/law.h"
#include "simulator/cluster.h"
#include "tests/scaling/test_laws.h"

namespace llmplan::planner::fixtures {

// The built-in presets (a test failure when they do not load).
inline presets::Catalog builtin_catalog() {
  auto c = presets::Catalog::builtin();
  EXPECT_TRUE(c.ok());
  return c.value();
}

// A built-in model preset (a test failure when `name` is unknown).
inline simulator::Model builtin_model(const std::string& name) {
  auto m = builtin_catalog().model(name);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.value();
}

// A built-in law preset (a test failure when `name` is unknown).
inline scaling::LossLaw builtin_law(const std::string& name) {
  auto l = builtin_catalog().law(name);
  EXPECT_TRUE(l.ok()) << l.status().message();
  return l.value();
}

// A built-in cluster preset (a test failure when `name` is unknown).
inline simulator::Cluster builtin_cluster(const std::string& name) {
  auto catalog = presets::Catalog::builtin();
  EXPECT_TRUE(catalog.ok());
  auto c = catalog.value().cluster(name);
  EXPECT_TRUE(c.ok()) << name;
  return c.value();
}

// Hoffmann et al. 2022's Approach 3 constants (the chinchilla preset's),
// named "test".
inline scaling::LossLaw chinchilla_test_law() { return scaling::testing::chinchilla_law("test"); }

// A small plan space on dgx-h100 (seconds): the gpt grid at seq 1024,
// vocab 32000, one 512K-token batch, tp, pp and micro-batch in {1, 2},
// 16 GPUs for one day, objective largest.
inline SearchOptions small_h100_options() {
  SearchOptions o;
  o.objective = Objective::kLargest;
  o.law = chinchilla_test_law();
  o.threads = 2;
  o.shape_template = family_template(Family::kGpt, 1024, 32000);
  o.space.global_batch_tokens = {512 * 1024};
  o.space.tp = {1, 2};
  o.space.pp = {1, 2};
  o.space.micro_batch = {1, 2};
  o.gpus = 16;
  o.days = 1;
  return o;
}

// A question for the pruning tests: `gpus` GPUs (the cluster is the
// caller's) for `days`, the family's template and its preset law
// (clark-moe for MoE, chinchilla otherwise), 2 threads.
inline SearchOptions pruning_question(double days, Objective objective, Family family,
                                      int gpus = 64) {
  SearchOptions o;
  o.gpus = gpus;
  o.days = days;
  o.objective = objective;
  o.family = family;
  o.shape_template = family_template(family);
  auto catalog = presets::Catalog::builtin();
  EXPECT_TRUE(catalog.ok());
  o.law = catalog.value().law(family == Family::kMoe ? "clark-moe" : "chinchilla").value();
  o.threads = 2;
  return o;
}

// The answer's model's simulated plans, in the result's order.
inline std::vector<simulator::Plan> answer_plans(const SearchResult& r) {
  std::vector<simulator::Plan> out;
  for (const PlanResult& p : r.plans) {
    if (p.shape == r.best) out.push_back(p.plan);
  }
  return out;
}

}  // namespace llmplan::planner::fixtures

#endif  // LLMPLAN_TESTS_PLANNER_SEARCH_FIXTURES_H_

// Failures, checkpoints and restarts (issue 28): planner/search/reliability.h,
// the built-in presets/interruptions.json, and the planner's wall-clock days.
#include "planner/search/reliability.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "planner/search/report_tables.h"
#include "reports/plan_report.h"
#include "reports/plan_report_json.h"
#include "planner/search/search.h"
#include "presets/catalog.h"
#include "tests/planner/search_fixtures.h"
#include "base/strict_json.h"

namespace llmplan::planner {
namespace {

simulator::Cluster cluster(const std::string& name) { return fixtures::builtin_cluster(name); }

simulator::Model model(const std::string& name) {
  auto catalog = presets::Catalog::builtin();
  EXPECT_TRUE(catalog.ok());
  auto m = catalog.value().model(name);
  EXPECT_TRUE(m.ok()) << name;
  return m.value();
}

Reliability h100() {
  auto r = builtin_reliability("h100-sxm");
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.value();
}

simulator::Plan plan_405b(int dp, bool sharded) {
  simulator::Plan p;
  p.tensor_parallel = 8;
  p.pipeline_parallel = 16;
  p.data_parallel = dp;
  p.micro_batch_size = 1;
  p.global_batch_size = 16 * dp;
  p.distributed_optimizer = sharded;
  return p;
}

TEST(Reliability, BuiltinRatesComeFromTheLlama3Snapshot) {
  const Reliability r = h100();
  EXPECT_TRUE(r.enabled);
  EXPECT_FALSE(r.carried_over);
  EXPECT_EQ(r.causes.size(), 19u);  // Table 5's 18 causes + the planned ones
  // 466 interruptions in 54 days on 16,384 GPUs (2,048 nodes of 8; 512
  // switches of 32): per GPU-day, whatever the scope.
  EXPECT_NEAR(rate_per_gpu_day(r, 8), 466.0 / (16384 * 54), 1e-12);
  // The same job size gives back the snapshot's 466 per 54 days.
  const JobSize j = job_size(16384, cluster("dgx-h100"), r.gpus_per_switch);
  double per_day = 0;
  for (const InterruptionCause& c : r.causes) {
    per_day += c.per_unit_day * (c.scope == CauseScope::kGpu    ? j.gpus
                                 : c.scope == CauseScope::kNode ? j.nodes
                                                                : j.switches);
  }
  EXPECT_NEAR(per_day * 54, 466, 1e-9);
  auto b = builtin_reliability("b200");
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->carried_over);
}

TEST(Reliability, YoungDalyAgainstItsClosedForm) {
  EXPECT_DOUBLE_EQ(young_daly_interval_s(30, 10800), std::sqrt(2.0 * 30 * 10800));
  // The exact optimum of E(tau + delta) / tau solves (1 - x) e^(x + a) = 1.
  for (double delta : {1.0, 30.0, 300.0}) {
    const double m = 10800, lambda = 1 / m;
    const double tau = optimal_interval_s(lambda, delta);
    const double x = lambda * tau, a = lambda * delta;
    EXPECT_NEAR((1 - x) * std::exp(x + a), 1.0, 1e-12) << delta;
    // Daly (2006), eq. 37: sqrt(2 delta M) (1 + sqrt(delta / 2M) / 3 + delta / 18M) - delta,
    // the higher-order estimate: within 0.5 % of the exact optimum for delta << M.
    const double daly = std::sqrt(2 * delta * m) *
                            (1 + std::sqrt(delta / (2 * m)) / 3 + delta / (18 * m)) - delta;
    EXPECT_NEAR(tau / daly, 1.0, 5e-3) << delta;
    // Young's first-order figure is within sqrt(delta / M) of it.
    EXPECT_NEAR(tau / young_daly_interval_s(delta, m), 1.0, std::sqrt(delta / m)) << delta;
  }
}

TEST(Reliability, SegmentExpectationClosedForm) {
  // (M + R) (e^(T/M) - 1): M 3 h, R 10 min, T 1 h.
  EXPECT_NEAR(expected_segment_s(1 / 10800.0, 600, 3600), (10800 + 600) * std::expm1(1 / 3.0), 1e-6);
  EXPECT_DOUBLE_EQ(expected_segment_s(0, 600, 3600), 3600);
}

TEST(Reliability, WallIsAtLeastComputeAndIncreasing) {
  const FailureCosts f =
      failure_costs(model("llama3-405b"), plan_405b(128, true), cluster("dgx-h100"), h100());
  ASSERT_TRUE(f.enabled);
  double last = 0;
  for (double w = 1000; w < 1e8; w *= 1.37) {
    const double wall = expected_wall_s(f, w);
    EXPECT_GE(wall, w);
    EXPECT_GT(wall, last) << w;
    last = wall;
    // The inverse: the most compute within a wall time.
    const double back = compute_s_within(f, wall);
    EXPECT_LE(expected_wall_s(f, back), wall);
    EXPECT_NEAR(back / w, 1.0, 1e-9);
  }
  FailureCosts off;
  EXPECT_EQ(expected_wall_s(off, 12345.678), 12345.678);
  EXPECT_EQ(compute_s_within(off, 12345.678), 12345.678);
}

TEST(Reliability, GoodputFallsWithRateJobSizeAndCheckpointSize) {
  const simulator::Cluster c = cluster("dgx-h100");
  const simulator::Model m = model("llama3-405b");
  const double w = 40 * 86400.0;
  // Rate.
  double last = 1.1;
  for (double scale : {0.25, 0.5, 1.0, 2.0, 4.0}) {
    Reliability r = h100();
    for (InterruptionCause& k : r.causes) k.per_unit_day *= scale;
    const Goodput g = goodput(m, plan_405b(128, true), c, r, w);
    EXPECT_LT(g.goodput, last) << scale;
    EXPECT_NEAR(g.wall_s, w / g.goodput, 1e-6 * w);
    last = g.goodput;
  }
  // Job size (more replicas of the same model and the same compute time).
  last = 1.1;
  for (int dp : {8, 32, 128, 512}) {
    const Goodput g = goodput(m, plan_405b(dp, true), c, h100(), w);
    EXPECT_LT(g.goodput, last) << dp;
    last = g.goodput;
  }
  // Checkpoint size.
  last = 1.1;
  for (double bytes : {2.0, 14.0, 100.0, 1000.0}) {
    Reliability r = h100();
    r.checkpoint.bytes_per_param = bytes;
    const Goodput g = goodput(m, plan_405b(128, true), c, r, w);
    EXPECT_LT(g.goodput, last) << bytes;
    last = g.goodput;
  }
  // A sharded optimizer writes less per GPU: a cheaper checkpoint.
  const Goodput sharded = goodput(m, plan_405b(128, true), c, h100(), w);
  const Goodput whole = goodput(m, plan_405b(128, false), c, h100(), w);
  EXPECT_LT(sharded.checkpoint_bytes_per_gpu, whole.checkpoint_bytes_per_gpu);
  EXPECT_GT(sharded.goodput, whole.goodput);
  // Hot spares shorten the restart of hardware faults.
  Reliability spares = h100();
  spares.checkpoint.spare_nodes = 16;
  EXPECT_GT(goodput(m, plan_405b(128, true), c, spares, w).goodput, sharded.goodput);
}

TEST(Reliability, CausesAddUpToTheWallTime) {
  const Goodput g = goodput(model("llama3-405b"), plan_405b(128, true), cluster("dgx-h100"), h100(),
                            50 * 86400.0);
  double lost = 0, count = 0;
  for (const CauseCost& c : g.causes) {
    lost += c.lost_s;
    count += c.interruptions;
  }
  EXPECT_NEAR(g.compute_s + g.checkpoint_overhead_s + lost, g.wall_s, 1e-6 * g.wall_s);
  EXPECT_NEAR(count, g.interruptions, 1e-9 * count);
}

TEST(Reliability, MonteCarloMeanMatchesTheExpectation) {
  const Goodput g = goodput(model("llama3-405b"), plan_405b(128, true), cluster("dgx-h100"), h100(),
                            30 * 86400.0);
  const WallDistribution d = monte_carlo(g, BandRatios{}, 2000, 12345);
  ASSERT_EQ(d.trials, 2000);
  EXPECT_GT(d.stderr_s, 0);
  EXPECT_NEAR(d.mean_s, g.wall_s, 3 * d.stderr_s);
  EXPECT_NEAR(d.mean_interruptions / g.interruptions, 1.0, 0.05);
  EXPECT_LE(d.p10_s, d.p50_s);
  EXPECT_LE(d.p50_s, d.p90_s);
  // Deterministic: the same seed, the same answer.
  const WallDistribution e = monte_carlo(g, BandRatios{}, 2000, 12345);
  EXPECT_EQ(d.p10_s, e.p10_s);
  EXPECT_EQ(d.mean_s, e.mean_s);
  // The simulator's band widens the distribution.
  const WallDistribution b = monte_carlo(g, BandRatios{true, 0.1, 0.9, 0.9, 1.2}, 2000, 12345);
  EXPECT_GT(b.p90_s - b.p10_s, d.p90_s - d.p10_s);
}

TEST(Reliability, BadFilesAreOneLineErrorsNamingThePath) {
  const Reliability base = h100();
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"{\"causes\": [{\"name\": \"x\", \"scope\": \"gpu\", \"per_day\": -1}]}", "f.json: causes[0]"},
      {"{\"causes\": [{\"name\": \"x\", \"scope\": \"rack\", \"per_day\": 1}]}", "scope"},
      {"{\"causes\": [{\"name\": \"x\", \"scope\": \"gpu\", \"per_day\": 1, \"rate\": 2}]}", "rate"},
      {"{\"causes\": [{\"name\": \"x\", \"scope\": \"gpu\", \"count\": 3}]}", "snapshot"},
      {"{\"causes\": [{\"name\": \"x\", \"scope\": \"gpu\"}]}", "exactly one"},
      {"{\"causes\": []}", "non-empty"},
      {"{\"cause\": []}", "cause"},
      {"{\"causes\": [", "f.json"},
      {"{\"storage\": {\"write_bytes_per_s\": 0}}", "write_bytes_per_s"},
  };
  for (const Case& c : cases) {
    auto r = parse_interruptions(c.text, "f.json", &base);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.status().message().find(c.message), std::string::npos) << r.status().message();
    EXPECT_EQ(r.status().message().find('\n'), std::string::npos) << r.status().message();
  }
  auto ok = parse_interruptions(
      "{\"causes\": [{\"name\": \"gpu\", \"scope\": \"gpu\", \"per_day\": 0.001, \"hardware\": true}]}",
      "f.json", &base);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->causes.size(), 1u);
  EXPECT_DOUBLE_EQ(ok->causes[0].per_unit_day, 0.001);
  EXPECT_EQ(ok->checkpoint.write_bytes_per_s, base.checkpoint.write_bytes_per_s);
}

// A small plan space on dgx-h100 (seconds): search_fixtures.h.
SearchOptions small_options() { return fixtures::small_h100_options(); }

TEST(Reliability, SearchCountsWallDaysAndDisabledIsTheOldAnswer) {
  const simulator::Cluster c = cluster("dgx-h100");
  SearchOptions off = small_options();
  SearchOptions on = small_options();
  on.reliability = h100();
  auto a = search(c, off);
  auto b = search(c, on);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_GE(a->best, 0);
  ASSERT_GE(b->best, 0);
  for (const Candidate& k : a->candidates) {
    if (k.best_plan >= 0) {
      EXPECT_EQ(k.days, k.compute_days);
    }
  }
  for (const Candidate& k : b->candidates) {
    if (k.best_plan >= 0) {
      EXPECT_GT(k.days, k.compute_days);
    }
  }
  // Failures only take time: the answer is no larger.
  EXPECT_LE(b->candidates[b->best].params, a->candidates[a->best].params);
}

TEST(Reliability, ReportIsTheSameForOneAndTwoThreads) {
  const simulator::Cluster c = cluster("dgx-h100");
  std::string text[2];
  for (int t : {1, 2}) {
    SearchOptions o = small_options();
    o.reliability = h100();
    o.threads = t;
    auto r = search(c, o);
    ASSERT_TRUE(r.ok());
    PlanReportView view{c, o, *r, "test", {}, nullptr, {}, {}, false};
    const reports::PlanReport tables = plan_report_tables(view);
    text[t - 1] = json::pretty(reports::plan_report_to_json(tables)) +
                  reports::plan_report_markdown(tables) + reports::candidates_csv(tables);
  }
  EXPECT_EQ(text[0], text[1]);
  EXPECT_NE(text[0].find("\"wall_days_p90\""), std::string::npos);
  EXPECT_NE(text[0].find("## Failures, checkpoints and goodput"), std::string::npos);
}

}  // namespace
}  // namespace llmplan::planner

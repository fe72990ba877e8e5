// The failures writers on tables filled by hand: reports/ writes what it is
// given, without the planner's reliability model.
#include "reports/failures_report.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>
#include <vector>

namespace llmplan::reports {
namespace {

constexpr double kDay = 86400.0;

Goodput sample_goodput() {
  Goodput g;
  g.enabled = true;
  g.compute_s = 10 * kDay;
  g.wall_s = 12.5 * kDay;
  g.goodput = 0.8;
  g.rate_per_s = 2.0 / kDay;
  g.mtbi_s = kDay / 2.0;
  g.interruptions = 25;
  g.checkpoint_bytes = 2.0 * 1024 * 1024 * 1024 * 1024;
  g.checkpoint_bytes_per_gpu = 512.0 * 1024 * 1024;
  g.checkpoint_write_s = 30;
  g.checkpoint_exposed_s = 30;
  g.checkpoint_load_s = 40;
  g.young_daly_interval_s = 600;
  g.interval_s = 600;
  g.checkpoints = 1440;
  g.checkpoint_overhead_s = 0.5 * kDay;
  g.mean_restart_s = 1800;
  g.causes = {{"faulty_gpu", 1.0 / kDay, 1800, 10, 1.5 * kDay},
              {"host_maintenance", 1.0 / kDay, 1800, 15, 0.5 * kDay},
              {"rare", 1e-9, 1800, 0.01, 1.0}};
  return g;
}

presets::Reliability sample_reliability() {
  presets::Reliability rel;
  rel.enabled = true;
  rel.causes = {{"faulty_gpu", presets::CauseScope::kGpu, 0.001, true, "s"},
                {"host_maintenance", presets::CauseScope::kNode, 0.008, false, "s"}};
  rel.checkpoint.write_bytes_per_s = 2e12;
  rel.checkpoint.read_bytes_per_s = 1e12;
  rel.source = "test";
  return rel;
}

TEST(FailuresReport, MarkdownWritesTheFilledTableByCauseLargestLossFirst) {
  WallDistribution d;
  d.trials = 100;
  d.p10_s = 12 * kDay;
  d.p50_s = 12.4 * kDay;
  d.p90_s = 14 * kDay;
  const std::string md = failures_markdown(sample_goodput(), d, sample_reliability(), 64);
  EXPECT_NE(md.find("**10.0 compute days → 12.5 wall-clock days** expected (goodput 80.0 %"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("P10–P90 12.0–14.0 days (median 12.4) over 100 Monte Carlo trials"),
            std::string::npos);
  EXPECT_NE(md.find("25 expected (12.0 h between them on 64 GPUs)"), std::string::npos) << md;
  EXPECT_NE(md.find("| faulty_gpu | 10.0 | 1.50 |"), std::string::npos) << md;
  // Sorted by days lost; a cause with under 0.05 expected interruptions is left out.
  EXPECT_LT(md.find("faulty_gpu"), md.find("host_maintenance"));
  EXPECT_EQ(md.find("| rare |"), std::string::npos);
  // Without trials, no Monte Carlo sentence.
  EXPECT_EQ(failures_markdown(sample_goodput(), {}, sample_reliability(), 64).find("Monte Carlo"),
            std::string::npos);
}

TEST(FailuresReport, AssumptionLineIsEmptyWhenDisabledAndNamesACarriedOverGpu) {
  presets::Reliability rel = sample_reliability();
  // 0.001 per GPU-day + 0.008 per node-day over 8 GPUs per node.
  EXPECT_NE(failures_assumption_line(rel, 8, "x100").find("0.002 interruptions per GPU-day (2 causes, test)"),
            std::string::npos)
      << failures_assumption_line(rel, 8, "x100");
  rel.carried_over = true;
  EXPECT_NE(failures_assumption_line(rel, 8, "x100").find("no published figures for x100"),
            std::string::npos);
  rel.enabled = false;
  EXPECT_EQ(failures_assumption_line(rel, 8, "x100"), "");
}

TEST(FailuresReport, CsvCellsAndJsonCarryTheTablesNumbers) {
  const Goodput g = sample_goodput();
  EXPECT_EQ(failure_csv_header().size(), 5u);
  EXPECT_EQ(failure_csv_cells(10, nullptr), std::vector<std::string>(5, ""));
  EXPECT_EQ(failure_csv_cells(10, &g), (std::vector<std::string>{"10", "12.5", "25", "0.8", "600"}));
  boost::json::object o;
  add_failure_fields_json(10, g, &o);
  EXPECT_DOUBLE_EQ(o.at("wall_days").as_double(), 12.5);
  const boost::json::object d = failures_detail_json(g, sample_reliability(), 8, {});
  EXPECT_TRUE(d.at("monte_carlo").is_null());
  EXPECT_EQ(d.at("lost_days_by_cause").as_array().size(), 3u);
  EXPECT_DOUBLE_EQ(d.at("job_interruptions_per_day").as_double(), 2.0);
}

}  // namespace
}  // namespace llmplan::reports

// The mixture-of-experts stage of calibrate (#27): calibrate_moe fits the
// three MoE constants on MoE rows only, inside their cited bounds,
// deterministically; the constants JSON carries the MoE figures (held out
// by model and release) and reads back.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <functional>
#include <string>
#include <vector>

#include "planner/accuracy/accuracy.h"
#include "planner/accuracy/accuracy_json.h"
#include "planner/accuracy/runs_file.h"
#include "presets/catalog.h"
#include "tests/planner/runs_fixtures.h"

namespace llmplan::planner {
namespace {

// The expressible MoE rows of the shipped H100 runs file (and the dense ones).
void h100_cases(std::vector<AccuracyCase>* moe, std::vector<AccuracyCase>* dense) {
  for (AccuracyCase& c : fixtures::shipped_runs_cases("h100/published_runs.csv")) {
    (c.config.model.is_moe() ? moe : dense)->push_back(std::move(c));
  }
}

// The expressible MoE rows of the shipped H100 runs file that `keep` keeps.
std::vector<AccuracyCase> h100_moe_cases_where(
    const std::function<bool(const AccuracyCase&)>& keep) {
  std::vector<AccuracyCase> moe, dense, kept;
  h100_cases(&moe, &dense);
  for (AccuracyCase& c : moe) {
    if (keep(c)) kept.push_back(std::move(c));
  }
  return kept;
}

TEST(MoeCalibration, FitsInsideTheCitedBoundsOnMoeRowsOnly) {
  std::vector<AccuracyCase> all, dense;
  h100_cases(&all, &dense);
  ASSERT_EQ(all.size(), 16u);
  // Every other MoE row (all three models; kept cheap for the ASan run).
  std::vector<AccuracyCase> moe;
  for (size_t i = 0; i < all.size(); i += 2) moe.push_back(all[i]);
  CalibrationOptions options;
  options.max_iterations = 2;
  AccuracyConstants base = constants_of(moe.front());
  base.roofline.grouped_gemm_expert_overhead_s = 0;
  base.roofline.moe_a2a_efficiency = 0;
  base.roofline.moe_a2a_nic_efficiency = 0;
  Result<MoeCalibrationResult> a = calibrate_moe(moe, base, options);
  ASSERT_TRUE(a.ok()) << a.status().message();
  const simulator::RooflineConstants& r = a->constants.roofline;
  EXPECT_GE(r.grouped_gemm_expert_overhead_s, 0.0);
  EXPECT_LE(r.grouped_gemm_expert_overhead_s, kGroupedGemmExpertOverheadCeilingS + 1e-12);
  EXPECT_GE(r.moe_a2a_efficiency, kMoeA2aEfficiencyFloor - 1e-12);
  EXPECT_LE(r.moe_a2a_efficiency, kMoeA2aEfficiencyCeiling + 1e-12);
  // Qwen3-235B's EP 32 all-to-all crosses four nodes and is NIC-bound:
  // the NIC efficiency is fitted and kept.
  EXPECT_FALSE(a->nic_held);
  EXPECT_GE(r.moe_a2a_nic_efficiency, kMoeA2aEfficiencyFloor - 1e-12);
  EXPECT_LE(r.moe_a2a_nic_efficiency, 1.0);
  // Only the MoE constants move.
  simulator::RooflineConstants same = r;
  same.grouped_gemm_expert_overhead_s = 0;
  same.moe_a2a_efficiency = 0;
  same.moe_a2a_nic_efficiency = 0;
  EXPECT_EQ(same, base.roofline);
  // Better than the dense constants alone on these rows (27.5 % MAPE).
  std::vector<AccuracyCase> plain = moe;
  apply_constants(base, &plain);
  Result<std::vector<double>> p = predict_iteration_times(plain, nullptr);
  ASSERT_TRUE(p.ok());
  std::vector<double> meas;
  for (const AccuracyCase& c : moe) meas.push_back(c.run.iteration_time_s);
  EXPECT_LT(a->in_sample_mape, summarise(*p, meas).mape);
  // Dense rows and no rows are errors.
  EXPECT_FALSE(calibrate_moe({}, base, options).ok());
  const Status s = calibrate_moe({dense.front()}, base, options).status();
  EXPECT_NE(s.message().find("is a dense row"), std::string::npos) << s.message();
}

// Inside one node the NIC efficiency is not fitted (held at 0, the
// cluster's); the result does not depend on the starting MoE values.
TEST(MoeCalibration, HoldsTheNicEfficiencyWhenNoExpertGroupLeavesTheNode) {
  const std::vector<AccuracyCase> in_node = h100_moe_cases_where([](const AccuracyCase& c) {
    return c.config.plan.expert_parallel <= c.config.cluster.nvlink_domain();
  });
  ASSERT_FALSE(in_node.empty());
  CalibrationOptions options;
  options.max_iterations = 4;
  AccuracyConstants base = constants_of(in_node.front());
  Result<MoeCalibrationResult> r = calibrate_moe(in_node, base, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->constants.roofline.moe_a2a_nic_efficiency, 0.0);
  // The start does not depend on base's MoE values: the same constants.
  base.roofline.moe_a2a_efficiency = 0.5;
  base.roofline.grouped_gemm_expert_overhead_s = 3e-6;
  Result<MoeCalibrationResult> again = calibrate_moe(in_node, base, options);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->constants.roofline, r->constants.roofline);
}

// Qwen3-30B-A3B's EP 16 rows span two nodes, but their flex dispatcher
// (one RDMA copy per token and node) is bound by its NVLink forwarding: no
// NIC efficiency the solver could stop at changes their step. Without
// Qwen3-235B-A22B (the one NIC-bound model), the NIC efficiency is
// therefore not kept: it is 0, the cluster's figure, so a model held out
// of the fit is not predicted with wherever the solver happened to stop
// (0.51 before this rule, which made Qwen3-235B-A22B 36 % too slow).
TEST(MoeCalibration, HoldsTheNicEfficiencyTheRowsDoNotDetermine) {
  std::vector<AccuracyCase> moe, dense;
  h100_cases(&moe, &dense);
  std::vector<AccuracyCase> rows;
  bool spans_nodes = false;
  for (const AccuracyCase& c : moe) {
    if (c.config.model.name == "qwen3-235b-a22b") continue;
    spans_nodes |= c.config.plan.expert_parallel > c.config.cluster.nvlink_domain();
    rows.push_back(c);
  }
  ASSERT_TRUE(spans_nodes);
  CalibrationOptions options;
  options.max_iterations = 4;
  AccuracyConstants base = constants_of(rows.front());
  Result<MoeCalibrationResult> r = calibrate_moe(rows, base, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->nic_held);
  EXPECT_FALSE(r->nic_matches_cluster);
  EXPECT_EQ(r->constants.roofline.moe_a2a_nic_efficiency, 0.0);
  for (const std::string& b : r->at_bound) {
    EXPECT_EQ(b.find("moe_a2a_nic_efficiency"), std::string::npos) << b;
  }
}

// Qwen3-235B-A22B's EP 32 rows are NIC-bound. Refitted on a cluster whose
// NIC figure is the fitted value, the fit equals the cluster's figure
// (B200's case: 0.79 fitted against 0.8): it is held at 0 as before, but
// the report must not call it undetermined (nic_matches_cluster).
TEST(MoeCalibration, TellsANicFitEqualToTheClusterFromAnUndeterminedOne) {
  std::vector<AccuracyCase> rows = h100_moe_cases_where(
      [](const AccuracyCase& c) { return c.config.model.name == "qwen3-235b-a22b"; });
  ASSERT_FALSE(rows.empty());
  CalibrationOptions options;
  options.max_iterations = 4;
  AccuracyConstants base = constants_of(rows.front());
  Result<MoeCalibrationResult> first = calibrate_moe(rows, base, options);
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_FALSE(first->nic_held);
  // Move the cluster's NIC figure to the last fit until a refit lands on
  // it (the solver's stopping point moves a little with the cluster's
  // figure: 0.723, then 0.710, ...).
  double fitted = first->constants.roofline.moe_a2a_nic_efficiency;
  Result<MoeCalibrationResult> again = first;
  for (int k = 0; k < 4 && !again->nic_held; ++k) {
    base.network.nic_efficiency = fitted;  // applied to every row's cluster
    for (AccuracyCase& c : rows) c.config.cluster.network.nic_efficiency = fitted;
    again = calibrate_moe(rows, base, options);
    ASSERT_TRUE(again.ok()) << again.status().message();
    if (!again->nic_held) fitted = again->constants.roofline.moe_a2a_nic_efficiency;
  }
  EXPECT_TRUE(again->nic_held) << fitted;
  EXPECT_TRUE(again->nic_matches_cluster);
  EXPECT_EQ(again->constants.roofline.moe_a2a_nic_efficiency, 0.0);
}

TEST(MoeCalibration, ConstantsJsonCarriesTheMoeFiguresAndReadsBack) {
  AccuracyConstants k;
  k.roofline.grouped_gemm_expert_overhead_s = 2e-6;
  k.roofline.moe_a2a_efficiency = 0.35;
  boost::json::object moe = {{"rows", 8},
                             {"in_sample_mape", 0.096},
                             {"held_out_by_model", {{"qwen3-30b-a3b", {{"rows", 2}, {"mape", 0.19}}}}},
                             {"leave_one_model_out_mape", 0.147}};
  Result<std::string> text = constants_to_json("b200", k, "fit", "net", &moe);
  ASSERT_TRUE(text.ok()) << text.status().message();
  const boost::json::value v = boost::json::parse(*text);
  EXPECT_EQ(v.at("moe").at("held_out_by_model").at("qwen3-30b-a3b").at("rows").as_int64(), 2);
  EXPECT_DOUBLE_EQ(v.at("roofline").at("moe_a2a_efficiency").as_double(), 0.35);
  AccuracyConstants back;
  ASSERT_TRUE(read_constants_text(*text, "c.json", &back).ok());
  EXPECT_DOUBLE_EQ(back.roofline.grouped_gemm_expert_overhead_s, 2e-6);
  EXPECT_DOUBLE_EQ(back.roofline.moe_a2a_efficiency, 0.35);
  const Status bad = read_constants_text(R"({"moe": 3})", "c.json", &back);
  EXPECT_NE(bad.message().find("c.json: moe: expected an object"), std::string::npos)
      << bad.message();
}

}  // namespace
}  // namespace llmplan::planner

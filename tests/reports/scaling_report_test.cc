#include "reports/scaling_report.h"

#include <gtest/gtest.h>

#include <string>

namespace llmplan::reports {
namespace {

FitReport sample_report(bool with_bootstrap) {
  FitReport r;
  r.fit.law = {"fit", 1.8172, 477.83, 2143.4, 0.34731, 0.36717, "", "", {}};
  r.fit.a = 0.5139;
  r.fit.b = 0.4861;
  r.fit.objective = 0.001018274;
  r.fit.huber_delta = 1e-3;
  r.fit.converged = true;
  r.fit.solver_report = "Termination: CONVERGENCE";
  r.fit.n_points = 3;
  r.fit.starts = 4500;
  r.fit.starts_polished = 20;
  r.fit.polished_converged = 20;
  r.fit.polished_at_best = 19;
  if (with_bootstrap) {
    r.fit.bootstrap.samples = 100;
    r.fit.bootstrap.confidence_level = 0.95;
    r.fit.bootstrap.seed = 7;
    r.fit.bootstrap.E = {1.79, 1.85, 0.02};
  }
  r.points = {{1e8, 2e9, 3.2}, {1e9, 2e10, 2.6}, {1e10, 2e11, 2.2}};
  r.data_source = "runs.csv";
  r.data_description = "N from \"N\", D from \"D\", loss from \"loss\"; 3 rows; 3 used";
  return r;
}

TEST(ScalingReport, FitTextListsParametersAndConvergence) {
  const std::string text = fit_text(sample_report(false));
  EXPECT_NE(text.find("to 3 points"), std::string::npos);
  EXPECT_NE(text.find("data: runs.csv: N from"), std::string::npos);
  EXPECT_NE(text.find("alpha"), std::string::npos);
  EXPECT_NE(text.find("0.34731"), std::string::npos);
  EXPECT_NE(text.find("2143.4"), std::string::npos);
  EXPECT_NE(text.find("converged: yes"), std::string::npos);
  EXPECT_NE(text.find("20 of 20 polished starts converged, 19 reached the best"),
            std::string::npos);
  EXPECT_EQ(text.find("CI"), std::string::npos);  // no bootstrap, no intervals
  const std::string with_ci = fit_text(sample_report(true));
  EXPECT_NE(with_ci.find("95% CI"), std::string::npos);
  EXPECT_NE(with_ci.find("[1.79, 1.85]"), std::string::npos);
  EXPECT_NE(with_ci.find("bootstrap: 100 resamples"), std::string::npos);
}

TEST(ScalingReport, MarkdownLinksThePlotNeverInlinesIt) {
  Result<std::string> inline_md = fit_markdown(sample_report(true), "");
  ASSERT_TRUE(inline_md.ok()) << inline_md.status().message();
  EXPECT_EQ(inline_md->rfind("# Scaling-law fit", 0), 0u);
  EXPECT_NE(inline_md->find("| parameter | estimate |"), std::string::npos);
  EXPECT_EQ(inline_md->find("<svg"), std::string::npos);
  EXPECT_NE(inline_md->find("--out DIR"), std::string::npos);
  Result<std::string> linked = fit_markdown(sample_report(false), "fit.svg");
  ASSERT_TRUE(linked.ok());
  EXPECT_EQ(linked->find("<svg"), std::string::npos);
  EXPECT_NE(linked->find("](fit.svg)"), std::string::npos);
}

TEST(ScalingReport, PlotSkipsTheFrontierOfAnInvalidLaw) {
  FitReport r = sample_report(false);
  r.fit.law.alpha = -0.1;
  Result<std::string> svg = fit_plot_svg(r);
  ASSERT_TRUE(svg.ok()) << svg.status().message();
  EXPECT_EQ(svg->find("frontier"), std::string::npos);
  EXPECT_NE(svg->find(">runs</text>"), std::string::npos);
}

TEST(ScalingReport, OptimalTextSaysWhichRuleAndBudget) {
  OptimalReport r;
  r.law = {"chinchilla", 1.69, 406.4, 410.7, 0.34, 0.28, "Hoffmann et al. 2022", "", {}};
  r.allocation = *scaling::optimal_for_compute(r.law, 2.71724544e24, scaling::AllocationRule::kLaw);
  r.budget = scaling::GpuBudget{"a100-80gb", 3360, 30, 312e12, 1.0};
  const std::string text = optimal_text(r);
  EXPECT_NE(text.find("2.717e+24 FLOP = 3360 x a100-80gb (312 TFLOP/s peak) x 30 days x MFU 1.00"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rule            law (minimise"), std::string::npos) << text;
  EXPECT_NE(text.find("N_opt           6.486e+10 parameters (64.9 B)"), std::string::npos) << text;
  EXPECT_NE(text.find("predicted loss  1.8797"), std::string::npos) << text;
  r.query = OptimalQuery::kParams;
  r.budget.reset();
  r.allocation =
      *scaling::optimal_for_params(r.law, 7e10, scaling::AllocationRule::kTokensPerParam20);
  const std::string by_params = optimal_text(r);
  EXPECT_NE(by_params.find("(where N = 70 B is optimal)"), std::string::npos) << by_params;
  EXPECT_NE(by_params.find("chinchilla-20 (D = 20 N"), std::string::npos) << by_params;
  EXPECT_NE(by_params.find("tokens/param    20.0"), std::string::npos) << by_params;
}

}  // namespace
}  // namespace llmplan::reports

// One CLI convention across commands (issue 12): the planner and `optimal`
// share their defaults, a file written by `fit` is a law file for --law,
// `validate --out` links its plot, and did-you-mean hints. Commands are
// wired as main wires them and run in-process.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "planner/cli/command.h"
#include "base/strict_json.h"
#include "tests/planner/simulate_cli.h"

namespace llmplan::planner {
namespace {

using testing_cli::CliRun;

// Parses `args` with every command registered, runs the action, captures stdout.
CliRun run(std::vector<std::string> args) {
  CLI::App app{"test"};
  app.require_subcommand(0, 1);
  GlobalOptions global;
  Action action;
  add_presets_command(app, global, &action);
  add_simulate_command(app, global, &action);
  add_fit_command(app, global, &action);
  add_optimal_command(app, global, &action);
  add_validate_command(app, global, &action);
  add_calibrate_command(app, global, &action);
  add_plan_options(app, global, &action);
  add_sweep_command(app, global, &action);
  add_schedule_command(app, global, &action);
  add_preset_file_option(app, &global);
  return testing_cli::parse_and_run(app, action, std::move(args), Status::invalid_argument);
}

std::string temp_dir(const std::string& name) {
  const std::string d = std::string(LLMPLAN_BINARY_DIR) + "/test_tmp/cli_convention_" + name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

double number_at(const boost::json::value& v, std::initializer_list<const char*> path) {
  const boost::json::value* at = &v;
  for (const char* key : path) at = &at->as_object().at(key);
  return at->to_number<double>();
}

const std::string kShapes = std::string(LLMPLAN_SOURCE_DIR) + "/tests/cli/files/shapes_two.json";

// 36 runs from a known law (as in scaling_cli_test), written as a CSV.
std::string write_runs_csv(const std::string& dir) {
  const std::string path = dir + "/runs.csv";
  std::ofstream out(path);
  out << "params,tokens,loss\n";
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 6; ++j) {
      const double n = 3e7 * std::pow(10.0, i * 0.5);
      const double d = n * 2 * std::pow(3.0, j);
      out << n << "," << d << "," << 1.7 + 450 / std::pow(n, 0.32) + 1200 / std::pow(d, 0.35)
          << "\n";
    }
  }
  return path;
}

TEST(CliConvention, OptimalUsesThePlannersDefaults) {
  // No --gpu, --cluster, --law or rule on either: the same naive model.
  CliRun plan = run({"--gpus", "64", "--days", "2", "--shapes", kShapes, "--format", "json"});
  ASSERT_TRUE(plan.status.ok()) << plan.status.message();
  CliRun opt = run({"optimal", "--gpus", "64", "--days", "2", "--format", "json"});
  ASSERT_TRUE(opt.status.ok()) << opt.status.message();
  const boost::json::value p = json::parse(plan.out, "plan").value();
  const boost::json::value o = json::parse(opt.out, "optimal").value();
  EXPECT_DOUBLE_EQ(number_at(o, {"n_params"}), number_at(p, {"naive", "params"}));
  EXPECT_DOUBLE_EQ(number_at(o, {"n_tokens"}), number_at(p, {"naive", "tokens"}));
  EXPECT_EQ(o.at("rule").as_string(), "chinchilla-20");
  EXPECT_EQ(o.at("budget").at("cluster").as_string(), p.at("cluster").as_string());
  EXPECT_EQ(o.at("law").at("name").as_string(), "chinchilla");
  EXPECT_GE(o.at("assumptions").as_array().size(), 4u);
  // --cluster and --gpu as in the planner; the text says what it assumed.
  CliRun h100 = run({"optimal", "--gpus", "64", "--days", "2", "--cluster", "dgx-h100"});
  ASSERT_TRUE(h100.status.ok()) << h100.status.message();
  EXPECT_NE(h100.out.find("64 x h100-sxm (989 TFLOP/s peak)"), std::string::npos) << h100.out;
  EXPECT_NE(h100.out.find("assumption      cluster dgx-h100"), std::string::npos) << h100.out;
  CliRun gpu = run({"optimal", "--gpus", "64", "--days", "2", "--gpu", "h100-sxm"});
  ASSERT_TRUE(gpu.status.ok()) << gpu.status.message();
  EXPECT_NE(gpu.out.find("64 x h100-sxm"), std::string::npos) << gpu.out;
  EXPECT_NE(run({"optimal", "--gpus", "64", "--days", "2", "--cluster", "no-such"})
                .status.message()
                .find("no-such"),
            std::string::npos);
}

TEST(CliConvention, FitOutputIsALawFileForOptimalAndThePlanner) {
  const std::string dir = temp_dir("fit_law");
  CliRun fit = run({"fit", write_runs_csv(dir), "--out", dir + "/fit"});
  ASSERT_TRUE(fit.status.ok()) << fit.status.message();
  const std::string fit_json = dir + "/fit/fit.json";
  const boost::json::value f = json::parse(read_text(fit_json), "fit.json").value();

  CliRun opt = run({"optimal", "--flops", "1e22", "--law", fit_json, "--format", "json"});
  ASSERT_TRUE(opt.status.ok()) << opt.status.message();
  const boost::json::value o = json::parse(opt.out, "optimal").value();
  EXPECT_EQ(o.at("law").at("name").as_string(), "fit");
  for (const char* k : {"E", "A", "B", "alpha", "beta"}) {
    EXPECT_DOUBLE_EQ(number_at(o, {"law", k}), number_at(f, {k})) << k;
  }
  // The fitted law predicts the loss of its own data's generator closely.
  const double n = number_at(o, {"n_params"}), d = number_at(o, {"n_tokens"});
  EXPECT_NEAR(number_at(o, {"loss"}), 1.7 + 450 / std::pow(n, 0.32) + 1200 / std::pow(d, 0.35),
              0.02);

  CliRun plan = run({"--gpus", "64", "--days", "2", "--shapes", kShapes, "--law", fit_json,
                     "--objective", "loss"});
  ASSERT_TRUE(plan.status.ok()) << plan.status.message();
  EXPECT_NE(plan.out.find("law: fit;"), std::string::npos) << plan.out.substr(0, 2000);

  // fit --format json on stdout, saved by the user, is accepted as well.
  CliRun stdout_fit = run({"fit", dir + "/runs.csv", "--format", "json"});
  ASSERT_TRUE(stdout_fit.status.ok());
  std::ofstream(dir + "/saved.json") << stdout_fit.out;
  EXPECT_TRUE(run({"optimal", "--flops", "1e22", "--law", dir + "/saved.json"}).status.ok());

  // An unconverged fit and a foreign key are refused, naming the field.
  std::string text = read_text(fit_json);
  const size_t at = text.find("\"converged\": true");
  ASSERT_NE(at, std::string::npos);
  std::ofstream(dir + "/unconverged.json")
      << text.substr(0, at) << "\"converged\": false" << text.substr(at + 17);
  const Status bad = run({"optimal", "--flops", "1e22", "--law", dir + "/unconverged.json"}).status;
  EXPECT_NE(bad.message().find("unconverged.json.converged: the fit did not converge"),
            std::string::npos)
      << bad.message();
  std::ofstream(dir + "/extra.json") << "{\"huber_delta\": 0.001, \"converged\": true, \"E\": 1.7, "
                                        "\"A\": 400, \"B\": 400, \"alpha\": 0.3, \"beta\": 0.3, "
                                        "\"colour\": 1}";
  const Status extra = run({"optimal", "--flops", "1e22", "--law", dir + "/extra.json"}).status;
  EXPECT_NE(extra.message().find("colour"), std::string::npos) << extra.message();
}

TEST(CliConvention, ValidateOutLinksItsPlot) {
  const std::string dir = temp_dir("validate");
  const std::string csv = std::string(LLMPLAN_SOURCE_DIR) + "/tests/cli/files/measured_3rows.csv";
  CliRun r = run({"validate", csv, "--format", "md", "--out", dir});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const std::string report = read_text(dir + "/report.md");
  EXPECT_NE(report.find("![Predicted vs measured iteration time](predicted_vs_measured.svg)"),
            std::string::npos)
      << report;
  EXPECT_EQ(report.find("<svg"), std::string::npos);
  EXPECT_EQ(r.out.find("<svg"), std::string::npos);
  EXPECT_NE(r.out.find("](" + dir + "/predicted_vs_measured.svg)"), std::string::npos);
  EXPECT_EQ(read_text(dir + "/predicted_vs_measured.svg").rfind("<svg", 0), 0u);
  EXPECT_TRUE(json::parse(read_text(dir + "/validation.json"), "validation.json").ok());
  EXPECT_EQ(read_text(dir + "/validation.csv").rfind("line,gpus,", 0), 0u);
  // Without --out the Markdown says where the plot would go.
  CliRun plain = run({"validate", csv, "--format", "md"});
  ASSERT_TRUE(plain.status.ok());
  EXPECT_EQ(plain.out.find("<svg"), std::string::npos);
  EXPECT_NE(plain.out.find("--out DIR"), std::string::npos);
}

TEST(CliConvention, SweepJsonHasTheCsvRowsAsNumbers) {
  CliRun r = run({"sweep", "--vtrain-config",
                  std::string(LLMPLAN_SOURCE_DIR) + "/data/vtrain/config_example.json", "--tp",
                  "1,2", "--pp", "1", "--dp", "1,7", "--format", "json"});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const boost::json::value v = json::parse(r.out, "sweep").value();
  const boost::json::array& plans = v.at("plans").as_array();
  ASSERT_EQ(plans.size(), 4u);
  EXPECT_EQ(v.at("plans_simulated").as_int64(), 4);
  EXPECT_EQ(plans[1].at("tp").as_int64(), 1);
  EXPECT_EQ(plans[1].at("dp").as_int64(), 7);
  EXPECT_TRUE(plans[1].at("iteration_s").is_null());  // 1920 is not divisible by 7
  EXPECT_FALSE(plans[1].at("error").as_string().empty());
  EXPECT_GT(plans[2].at("iteration_s").to_number<double>(), 0);
  EXPECT_NEAR(plans[2].at("gpu_hours").to_number<double>(),
              plans[2].at("days").to_number<double>() * 24 * 2, 1e-6);
}

TEST(CliConvention, ClosestNameForDidYouMean) {
  const std::vector<std::string> flags = {"--gpus", "--gpu", "--days", "--format", "--out"};
  EXPECT_EQ(closest_name("--dayz", flags), "--days");
  EXPECT_EQ(closest_name("--gpsu", flags), "--gpus");  // a swap of neighbours is one edit
  EXPECT_EQ(closest_name("--formt", flags), "--format");
  EXPECT_EQ(closest_name("--gpux", flags), "--gpus");  // ties: the earlier name
  EXPECT_EQ(closest_name("--frobnicate", flags), "");
  EXPECT_EQ(closest_name("fitt", {"fit", "optimal", "sweep"}), "fit");
  EXPECT_EQ(closest_name("x", {}), "");
}

// Issue 48, item 5: what a person writes, and nothing strtod also reads.
TEST(CliConvention, DecimalNumbersOnly) {
  for (const char* ok : {"5", "+5", "-0.5", "0.5", ".5", "5.", "1e24", "1.5E-3", "007"}) {
    EXPECT_TRUE(is_decimal_number(ok)) << ok;
  }
  for (const char* bad : {"", " 5", "5 ", "0x10", "0x1p40", "inf", "nan", "1e", "e5", ".", "+",
                          "1,000", "5M", "--5", "1e+"}) {
    EXPECT_FALSE(is_decimal_number(bad)) << bad;
  }
}

}  // namespace
}  // namespace llmplan::planner

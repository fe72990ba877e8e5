// End-to-end runs of `llmplan fit` and `llmplan optimal` through the CLI
// layer (parsing, presets, output formats, files written).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "planner/cli/command.h"
#include "tests/planner/simulate_cli.h"

namespace llmplan::planner {
namespace {

using testing_cli::CliRun;

CliRun run_cli(const std::string& command_line) {
  return testing_cli::run_command({add_fit_command, add_optimal_command}, command_line);
}

// The number after `"key": ` in JSON text (NaN when absent).
double json_number(const std::string& text, const std::string& key) {
  const size_t at = text.find("\"" + key + "\": ");
  if (at == std::string::npos) return NAN;
  return std::strtod(text.c_str() + at + key.size() + 4, nullptr);
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::path(testing::TempDir()) / ("llmplan_scaling_cli_" + name)).string();
}

// 36 runs from a known law, written as a CSV with a FLOPs column.
std::string write_runs_csv() {
  const std::string path = temp_path("runs.csv");
  std::ofstream out(path);
  out << "params,C_flops,loss\n";
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 6; ++j) {
      const double n = 3e7 * std::pow(10.0, i * 0.5);
      const double d = n * 2 * std::pow(3.0, j);
      const double loss = 1.7 + 450 / std::pow(n, 0.32) + 1200 / std::pow(d, 0.35);
      out << n << "," << 6 * n * d << "," << loss << "\n";
    }
  }
  return path;
}

TEST(ScalingCli, OptimalFromFlopsWithALawFile) {
  const std::string law = temp_path("law.json");
  std::ofstream(law) << R"({"name": "mine", "E": 1.69, "A": 406.4, "B": 410.7, "alpha": 0.34,
                           "beta": 0.28})";
  CliRun r = run_cli("optimal --flops 5.76e23 --rule law --law " + law + " --format json");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_NE(r.out.find("\"rule\": \"law\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"name\": \"mine\""), std::string::npos) << r.out;
  EXPECT_NEAR(json_number(r.out, "n_params"), 32.189859e9, 1e4) << r.out;
  r = run_cli("optimal --flops 5.76e23 --rule chinchilla-20 --law " + law);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_NE(r.out.find("tokens/param    20.0"), std::string::npos) << r.out;
}

TEST(ScalingCli, OptimalFromAGpuBudgetUsesThePresets) {
  CliRun r = run_cli("optimal --gpus 3360 --days 30 --gpu a100-80gb --law chinchilla --rule law");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_NE(r.out.find("2.717e+24 FLOP = 3360 x a100-80gb"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(64.9 B)"), std::string::npos) << r.out;
  r = run_cli("optimal --gpus 8 --days 1 --gpu a100-80gb --mfu 0.4 --law epoch --tokens-rule law "
              "--format json");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_DOUBLE_EQ(json_number(r.out, "mfu"), 0.4) << r.out;
  EXPECT_DOUBLE_EQ(json_number(r.out, "flops"), 8 * 86400 * 312e12 * 0.4) << r.out;
  EXPECT_NE(r.out.find("\"name\": \"epoch\""), std::string::npos) << r.out;
}

TEST(ScalingCli, OptimalBadInputs) {
  EXPECT_EQ(run_cli("optimal --flops 1e24 --params 1e9").status.message(),
            "give exactly one of --flops C, --gpus G --days D, --params N, --tokens D");
  EXPECT_EQ(run_cli("optimal --gpus 8").status.message(),
            "a GPU budget needs --gpus G (> 0) and --days D (> 0)");
  EXPECT_EQ(run_cli("optimal --flops 1e24 --cluster dgx-h100").status.message(),
            "--gpu/--cluster apply to a GPU budget (--gpus G --days D)");
  EXPECT_NE(
      run_cli("optimal --gpus 8 --days 3 --gpu no-such-gpu").status.message().find("no-such-gpu"),
      std::string::npos);
  EXPECT_NE(run_cli("optimal --flops 1e24 --law no-such-law").status.message().find("no-such-law"),
            std::string::npos);
  EXPECT_EQ(run_cli("optimal --flops 1e24 --law /nonexistent/law.json").status.message(),
            "/nonexistent/law.json: cannot open file");
  EXPECT_EQ(run_cli("optimal --params 1e9 --max-tokens 1e10").status.message(),
            "--max-params/--max-tokens apply to a compute budget only");
}

TEST(ScalingCli, FitWritesJson) {
  CliRun r = run_cli("fit " + write_runs_csv() + " --format json");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  for (const char* key : {"\"E\": ", "\"A\": ", "\"B\": ", "\"alpha\": ", "\"beta\": ",
                          "\"objective\"", "\"converged\": true", "\"n_points\": 36",
                          "\"starts\": 4500", "\"seconds\"", "D = C/(6N) from \\\"C_flops\\\""}) {
    EXPECT_NE(r.out.find(key), std::string::npos) << key << "\n" << r.out;
  }
}

TEST(ScalingCli, FitMarkdownWithBootstrapAndOutDir) {
  const std::string dir = temp_path("out");
  std::filesystem::remove_all(dir);
  CliRun r =
      run_cli("fit " + write_runs_csv() + " --format md --bootstrap 3 --seed 5 --out-dir " + dir);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_NE(r.out.find("# Scaling-law fit"), std::string::npos);
  EXPECT_NE(r.out.find("95% CI"), std::string::npos);
  EXPECT_NE(r.out.find("](fit.svg)"), std::string::npos);
  for (const char* file : {"fit.svg", "fit.md", "fit.json"}) {
    EXPECT_TRUE(std::filesystem::is_regular_file(std::filesystem::path(dir) / file)) << file;
  }
  std::ifstream svg(std::filesystem::path(dir) / "fit.svg");
  std::string first_line;
  std::getline(svg, first_line);
  EXPECT_EQ(first_line.rfind("<svg", 0), 0u);
}

TEST(ScalingCli, FitBadInputs) {
  EXPECT_EQ(run_cli("fit /nonexistent/runs.csv").status.message(),
            "/nonexistent/runs.csv: cannot open file");
  const std::string path = temp_path("bad.csv");
  std::ofstream(path) << "params,tokens,perplexity\n1,2,3\n";
  EXPECT_NE(run_cli("fit " + path).status.message().find("no loss column"), std::string::npos);
  EXPECT_NE(run_cli("fit " + path + " --loss-column perplexity")
                .status.message()
                .find("a fit needs at least 5"),
            std::string::npos);
}

}  // namespace
}  // namespace llmplan::planner

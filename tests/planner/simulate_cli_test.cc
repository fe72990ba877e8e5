// `llmplan simulate` through the CLI layer: the caveats of a result reach
// every output format.
#include <gtest/gtest.h>

#include <string>

#include "planner/cli/command.h"
#include "base/strict_json.h"
#include "tests/planner/simulate_cli.h"

namespace llmplan::planner {
namespace {

using testing_cli::CliRun;
using testing_cli::run_simulate;

constexpr const char* kSmall =
    "--layers 32 --hidden 4096 --heads 32 --tp 1 --pp 1 --dp 8 --micro-batch 2 "
    "--global-batch 512";

TEST(SimulateCli, JsonCarriesTheCaveats) {
  const CliRun a100 = run_simulate(std::string(kSmall) + " --format json");
  ASSERT_TRUE(a100.status.ok()) << a100.status.message();
  Result<boost::json::value> v = json::parse(a100.out, "stdout");
  ASSERT_TRUE(v.ok()) << v.status().message();
  const boost::json::array& caveats = v->as_object().at("caveats").as_array();
  // A calibrated A100 at an MFU above its measured runs, with flash attention.
  ASSERT_EQ(caveats.size(), 2u) << a100.out;
  EXPECT_EQ(caveats[0].as_object().at("code").as_string(), "mfu-above-validated");
  EXPECT_EQ(caveats[1].as_object().at("code").as_string(), "flash-attention-unfitted");
  EXPECT_GT(v->as_object().at("mfu").as_double(), 0.4629);

  // vTrain's own conditions at a small MFU: nothing to flag.
  const CliRun inside = run_simulate(
      "--layers 24 --hidden 1024 --heads 16 --seq 1024 --tp 2 --pp 2 --dp 2 --micro-batch 4 "
      "--global-batch 32 --recompute full --no-flash-attention --precision fp16 --format json");
  ASSERT_TRUE(inside.status.ok()) << inside.status.message();
  Result<boost::json::value> w = json::parse(inside.out, "stdout");
  ASSERT_TRUE(w.ok());
  EXPECT_TRUE(w->as_object().at("caveats").as_array().empty()) << inside.out;
}

TEST(SimulateCli, TextAndMarkdownPrintTheCaveats) {
  // gb300 is derived (never fitted): uncalibrated.
  const CliRun gb300 = run_simulate(std::string(kSmall) + " --gpu gb300");
  ASSERT_TRUE(gb300.status.ok()) << gb300.status.message();
  EXPECT_NE(gb300.out.find("caveats:\n  - uncalibrated-gpu: GPU gb300"), std::string::npos)
      << gb300.out;
  // The H200's constants are the H100 fit carried over: it says so.
  const CliRun h200 = run_simulate(std::string(kSmall) + " --gpu h200-sxm");
  ASSERT_TRUE(h200.status.ok()) << h200.status.message();
  EXPECT_NE(h200.out.find("h100-sxm's fit carried over"), std::string::npos) << h200.out;
  const CliRun md = run_simulate(std::string(kSmall) + " --format md");
  ASSERT_TRUE(md.status.ok());
  EXPECT_NE(md.out.find("## Caveats\n\n- mfu-above-validated: predicted MFU"), std::string::npos)
      << md.out;
}

}  // namespace
}  // namespace llmplan::planner

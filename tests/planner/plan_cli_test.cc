// The root planner command's wiring: --gpus sets the action; bad inputs are
// one-line errors; a bare invocation leaves no action (main prints help);
// bad flag values and misplaced planner flags are parse errors (exit 2).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "planner/cli/command.h"

namespace llmplan::planner {
namespace {

// Wired as main wires it: no fallthrough, --preset-file on every command.
Action parse(std::vector<std::string> args, GlobalOptions& global) {
  CLI::App app{"test"};
  app.require_subcommand(0, 1);
  Action action;
  add_plan_options(app, global, &action);
  add_sweep_command(app, global, &action);
  add_preset_file_option(app, &global);
  std::reverse(args.begin(), args.end());
  app.parse(args);
  return action;
}

TEST(PlanCli, BareInvocationHasNoAction) {
  GlobalOptions g;
  EXPECT_FALSE(parse({}, g));
}

// What main reports as "llmplan: error: ..." with exit status 2.
std::string parse_error(std::vector<std::string> args) {
  GlobalOptions g;
  try {
    parse(std::move(args), g);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

TEST(PlanCli, PlannerFlagsWithoutGpusOrWithASubcommandAreUsageErrors) {
  EXPECT_EQ(parse_error({"--days", "30"}),
            "--gpus is required to plan (--days was given without it)");
  EXPECT_NE(parse_error({"--gpus", "8", "sweep", "--config", "x.json"})
                .find("--gpus is an option of the planner"),
            std::string::npos);
  // After the subcommand a planner flag is not the subcommand's: an error,
  // never silently taken by the planner.
  EXPECT_NE(parse_error({"sweep", "--config", "x.json", "--days", "3"}).find("--days"),
            std::string::npos);
}

TEST(PlanCli, NonFiniteAndOutOfRangeFlagValuesAreUsageErrors) {
  for (const char* bad : {"nan", "inf", "-inf", "-1", "1e309", "x"}) {
    const std::string e = parse_error({"--gpus", "8", "--days", "3", "--budget-usd", bad});
    EXPECT_EQ(e.rfind("--budget-usd: must be a finite number >= 0, got ", 0), 0u)
        << bad << ": " << e;
  }
  EXPECT_NE(
      parse_error({"--gpus", "8", "--days", "inf"}).find("--days: must be a finite number > 0"),
      std::string::npos);
  EXPECT_NE(parse_error({"--gpus", "2000000000", "--days", "3"}).find("--gpus: must be an integer"),
            std::string::npos);
  EXPECT_NE(parse_error({"--gpus", "8", "--days", "3", "--tokens-per-param", "inf"})
                .find("--tokens-per-param"),
            std::string::npos);
  EXPECT_NE(parse_error({"sweep", "--global-batch", "0"})
                .find("--global-batch: must be an integer from 1"),
            std::string::npos);
  for (const char* bad : {"nan", "inf", "0"}) {
    EXPECT_NE(parse_error({"sweep", "--tokens", bad}).find("--tokens: must be a finite number > 0"),
              std::string::npos)
        << bad;
  }
  EXPECT_NE(parse_error({"sweep", "--tp", "1,0,2"}).find("--tp: must be an integer"),
            std::string::npos);
  EXPECT_EQ(parse_error({"--gpus", "8", "--days", "0.5", "--budget-usd", "0"}), "");
}

TEST(PlanCli, PresetFileGoesBeforeOrAfterTheCommand) {
  GlobalOptions g;
  const std::string file = std::string(LLMPLAN_SOURCE_DIR) + "/tests/cli/files/price_preset.json";
  ASSERT_TRUE(parse({"--preset-file", file, "sweep", "--preset-file", file}, g));
  EXPECT_EQ(g.preset_files, (std::vector<std::string>{file, file}));
}

TEST(PlanCli, BadInputsAreOneLineErrors) {
  GlobalOptions g;
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--gpus", "4", "--days", "30"},
           {"--gpus", "512", "--days", "1e308"},
           {"--gpus", "64", "--days", "30", "--gpu", "no-such-gpu"},
           {"--gpus", "64", "--days", "30", "--law", "no-such-law"}}) {
    Action a = parse(args, g);
    ASSERT_TRUE(a);
    const Status s = a();
    EXPECT_FALSE(s.ok()) << args[1];
    EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
  }
}

TEST(PlanCli, SweepRejectsMissingConfig) {
  GlobalOptions g;
  Action a = parse({"sweep", "--tp", "1,2"}, g);
  ASSERT_TRUE(a);
  EXPECT_NE(a().message().find("--config"), std::string::npos);
}

}  // namespace
}  // namespace llmplan::planner

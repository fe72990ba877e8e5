// The root planner command's wiring: --gpus sets the action; bad inputs are
// one-line errors; a bare invocation leaves no action (main prints help).
#include <gtest/gtest.h>

#include "planner/command.h"

namespace llmplan::planner {
namespace {

Action parse(std::vector<std::string> args, const GlobalOptions& global) {
  CLI::App app{"test"};
  app.fallthrough();
  app.require_subcommand(0, 1);
  Action action;
  add_plan_options(app, global, &action);
  add_sweep_command(app, global, &action);
  std::reverse(args.begin(), args.end());
  app.parse(args);
  return action;
}

TEST(PlanCli, BareInvocationHasNoAction) {
  GlobalOptions g;
  EXPECT_FALSE(parse({}, g));
  EXPECT_FALSE(parse({"--days", "30"}, g));
}

TEST(PlanCli, BadInputsAreOneLineErrors) {
  GlobalOptions g;
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--gpus", "0", "--days", "30"},
           {"--gpus", "64", "--days", "-2"},
           {"--gpus", "4", "--days", "30"},
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

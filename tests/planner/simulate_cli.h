// Runs `llmplan simulate ARGS` through the CLI layer in-process, for tests:
// the command's status and what it printed on stdout.
#ifndef LLMPLAN_TESTS_PLANNER_SIMULATE_CLI_H_
#define LLMPLAN_TESTS_PLANNER_SIMULATE_CLI_H_

#include <gtest/gtest.h>

#include <string>

#include "planner/cli/command.h"

namespace llmplan::planner::testing_cli {

struct CliRun {
  Status status;
  std::string out;
};

inline CliRun run_simulate(const std::string& args) {
  CLI::App app{"test"};
  GlobalOptions global;
  Action action;
  add_simulate_command(app, global, &action);
  app.parse("simulate " + args);
  EXPECT_TRUE(static_cast<bool>(action)) << args;
  if (!action) return {Status::internal("no action"), ""};
  testing::internal::CaptureStdout();
  Status status = action();
  return {status, testing::internal::GetCapturedStdout()};
}

}  // namespace llmplan::planner::testing_cli

#endif  // LLMPLAN_TESTS_PLANNER_SIMULATE_CLI_H_

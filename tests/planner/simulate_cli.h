// Runs `llmplan simulate ARGS` (or any command line, through an app the test
// registered its commands on) in-process, for tests: the command's status
// and what it printed on stdout.
#ifndef LLMPLAN_TESTS_PLANNER_SIMULATE_CLI_H_
#define LLMPLAN_TESTS_PLANNER_SIMULATE_CLI_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "planner/cli/command.h"

namespace llmplan::planner::testing_cli {

struct CliRun {
  Status status;
  std::string out;
};

// What registers one command (add_simulate_command, add_validate_command, ...).
using AddCommand = void (*)(CLI::App&, const GlobalOptions&, Action*);

// Runs `command_line` (the command's name first) with only the commands
// that `adds` register; an expectation fails when no action is chosen.
inline CliRun run_command(std::initializer_list<AddCommand> adds, const std::string& command_line) {
  CLI::App app{"test"};
  GlobalOptions global;
  Action action;
  for (AddCommand add : adds) add(app, global, &action);
  app.parse(command_line);
  EXPECT_TRUE(static_cast<bool>(action)) << command_line;
  if (!action) return {Status::internal("no action"), ""};
  testing::internal::CaptureStdout();
  Status status = action();
  return {status, testing::internal::GetCapturedStdout()};
}

inline CliRun run_simulate(const std::string& args) {
  return run_command({add_simulate_command}, "simulate " + args);
}

// Parses `args` (after the program name) with `app`, runs the action it
// chose into `action` and captures its stdout. A parse error becomes
// `parse_error(its message)`; no action chosen, Internal "no action".
template <typename ParseError>
CliRun parse_and_run(CLI::App& app, const Action& action, std::vector<std::string> args,
                     ParseError parse_error) {
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return {parse_error(e.what()), ""};
  }
  if (!action) return {Status::internal("no action"), ""};
  testing::internal::CaptureStdout();
  Status status = action();
  return {status, testing::internal::GetCapturedStdout()};
}

}  // namespace llmplan::planner::testing_cli

#endif  // LLMPLAN_TESTS_PLANNER_SIMULATE_CLI_H_

// llmplan: what is the best model G GPUs can train in D days, and how?
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "planner/command.h"
#include "planner/version.h"

int main(int argc, char** argv) {
  using llmplan::planner::Action;
  CLI::App app{"llmplan: plan LLM training runs -- simulate iteration time, size models with "
               "scaling laws, and find the largest model a cluster can train by a deadline."};
  app.set_version_flag("--version", llmplan::version_line("llmplan"));
  app.fallthrough();
  app.require_subcommand(0, 1);

  llmplan::planner::GlobalOptions global;
  app.add_option("--preset-file", global.preset_files,
                 "JSON file of extra presets (same format as presets/*.json); repeatable")
      ->check(CLI::ExistingFile);

  Action action;
  // [presets commands]
  llmplan::planner::add_presets_command(app, global, &action);
  // [simulator commands]
  llmplan::planner::add_simulate_command(app, global, &action);
  // [scaling commands]
  llmplan::planner::add_fit_command(app, global, &action);
  llmplan::planner::add_optimal_command(app, global, &action);
  // [accuracy commands]
  llmplan::planner::add_validate_command(app, global, &action);
  llmplan::planner::add_calibrate_command(app, global, &action);
  // [planner commands]
  llmplan::planner::add_plan_options(app, global, &action);
  llmplan::planner::add_sweep_command(app, global, &action);
  // [schedule commands]
  llmplan::planner::add_schedule_command(app, global, &action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::fprintf(stderr, "llmplan: error: %s\n", e.what());
    std::fprintf(stderr, "Run 'llmplan --help' for usage.\n");
    return 2;
  }
  if (!action) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  }
  llmplan::Status status = action();
  // Output printed piecewise (calibrate streams its lines) is checked here:
  // a failed write to stdout (a full disk, /dev/full) is an error, never 0.
  if (status.ok() && (std::fflush(stdout) != 0 || std::ferror(stdout))) {
    status = llmplan::Status::io_error("cannot write to standard output");
  }
  if (!status.ok()) {
    std::fprintf(stderr, "llmplan: error: %s\n", status.message().c_str());
    return 1;
  }
  return 0;
}

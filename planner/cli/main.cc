// llmplan: what is the best model G GPUs can train in D days, and how?
#include <CLI/CLI.hpp>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "planner/cli/command.h"
#include "planner/study/distributed.h"
#include "base/version.h"
#include "scaling/solver_log.h"

namespace {

// `message` with every control byte (a newline or an escape sequence in a
// path, say) written as \xNN, so that an error stays one line and cannot
// drive the terminal (issue 31, item 7).
std::string printable(const std::string& message) {
  std::string out;
  out.reserve(message.size());
  for (char c : message) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b == 0x7F) {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02X", b);
      out += hex;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// What main returns after printing help or the version: 0, or 1 with a
// one-line error when standard output could not take it (a full disk, a
// closed pipe), as for every other output.
int finish_stdout() {
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return 0;
  std::fprintf(stderr, "llmplan: error: cannot write to standard output: %s\n",
               std::strerror(errno));
  return 1;
}

// Every spelling of the flags of `app` ("--flops", "-o", "--output").
std::vector<std::string> flag_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& l : opt->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : opt->get_snames()) names.push_back("-" + s);
  }
  return names;
}

// The names of the subcommands of `app`.
std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(sub->get_name());
  }
  return names;
}

// The message of a parse error. CLI11 lists unexpected arguments in reverse
// ("...not expected: DIR --out"); say instead which command met them, in
// command-line order ("simulate: unexpected arguments --out DIR"), and add
// a did-you-mean for the first unknown flag (against that command's own
// flags) or, at the root, for an unknown command name.
std::string usage_error_message(const CLI::App& app, const CLI::ParseError& e) {
  if (dynamic_cast<const CLI::ExtrasError*>(&e) == nullptr) return e.what();
  std::string command;
  std::vector<std::string> extras = app.remaining();
  const CLI::App* innermost = &app;
  for (const CLI::App* sub = &app;;) {
    const std::vector<const CLI::App*> parsed =
        sub->get_subcommands([](const CLI::App* s) { return s->parsed(); });
    if (parsed.empty()) break;
    sub = parsed.front();
    innermost = sub;
    command += (command.empty() ? "" : " ") + sub->get_name();
    for (const std::string& arg : sub->remaining()) extras.push_back(arg);
  }
  std::string list;
  for (const std::string& arg : extras) list += (list.empty() ? "" : " ") + arg;
  if (list.empty()) return e.what();
  const std::string where = command.empty() ? "llmplan" : "llmplan " + command;
  const std::string see = "see '" + where + " --help'";
  std::string hint;
  for (const std::string& arg : extras) {
    if (!arg.starts_with('-') || arg.size() < 2) continue;
    const std::string flag = arg.substr(0, arg.find('='));
    const std::string guess = llmplan::planner::closest_name(flag, flag_names(*innermost));
    if (!guess.empty()) hint = "; did you mean " + guess + "?";
    break;
  }
  if (command.empty() && !extras.front().starts_with('-')) {  // `llmplan fitt data.csv`
    const std::string guess = llmplan::planner::closest_name(extras.front(), command_names(app));
    return "unknown command '" + extras.front() + "'" +
           (guess.empty() ? "" : "; did you mean '" + guess + "'?") + " (" + see + ")";
  }
  return (command.empty() ? std::string() : command + ": ") + "unexpected argument" +
         (extras.size() > 1 ? "s " : " ") + list + hint + " (" + see + ")";
}

}  // namespace

int main(int argc, char** argv) {
  using llmplan::planner::Action;
  llmplan::scaling::silence_solver_logging();  // llmplan reports solver outcomes itself
  // A closed pipe (`llmplan presets | head -c1`) is a failed write like a
  // full disk: the write returns EPIPE and the command ends with a one-line
  // error and exit 1, instead of dying of SIGPIPE (status 141) in silence.
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"llmplan: plan LLM training runs -- simulate iteration time, size models with "
               "scaling laws, and find the largest model a cluster can train by a deadline."};
  // "mpi: Open MPI v4.1.4" or "no mpi": whether `mpirun -n N llmplan
  // frontier` can split its work (known at build time: MPI is not loaded).
  app.set_version_flag("--version",
                       llmplan::version_line("llmplan", llmplan::planner::built_with_mpi()
                                                            ? "mpi: " + llmplan::planner::mpi_library_version()
                                                            : std::string("no mpi")));
  // No fallthrough: an option after a subcommand belongs to that subcommand,
  // so a planner flag there (`simulate ... --out DIR`) is an error instead of
  // being silently taken by the root. --preset-file, the one option every
  // command shares, is registered on each of them (add_preset_file_option).
  app.require_subcommand(0, 1);

  llmplan::planner::GlobalOptions global;
  global.command_line.assign(argv, argv + argc);

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
  // [frontier commands]
  llmplan::planner::add_frontier_command(app, global, &action);
  // [schedule commands]
  llmplan::planner::add_schedule_command(app, global, &action);
  llmplan::planner::add_preset_file_option(app, &global);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // --help, --version: checked like any output
      app.exit(e);
      return finish_stdout();
    }
    // A usage error: one line naming the flag, exit status 2.
    std::fprintf(stderr, "llmplan: error: %s\n", printable(usage_error_message(app, e)).c_str());
    return 2;
  }
  if (const std::string bad = llmplan::planner::given_value_error(app); !bad.empty()) {
    std::fprintf(stderr, "llmplan: error: %s\n", printable(bad).c_str());
    return 2;
  }
  if (!action) {  // bare `llmplan` (a planner flag without --gpus is a parse error)
    std::fputs(app.help().c_str(), stdout);
    return finish_stdout();
  }
  llmplan::Status status = action();
  // Output printed piecewise (calibrate streams its lines) is checked here:
  // a failed write to stdout (a full disk, /dev/full) is an error, never 0.
  if (status.ok() && (std::fflush(stdout) != 0 || std::ferror(stdout))) {
    status = llmplan::Status::io_error(std::string("cannot write to standard output: ") +
                                       std::strerror(errno));
  }
  if (!status.ok()) {
    std::fprintf(stderr, "llmplan: error: %s\n", printable(status.message()).c_str());
    // A command line that contradicts itself or its inputs is a usage error.
    return status.code() == llmplan::StatusCode::kUsage ? 2 : 1;
  }
  return 0;
}

// The subcommands of the `llmplan` executable. Each add_*_command registers
// one CLI11 subcommand on `app`; when the user picks it, its callback stores
// the work to do in *action, which main runs after parsing.
//
// An action returns OK or a Status whose message main prints as one line
// ("llmplan: error: ...") before exiting non-zero.
#ifndef LLMPLAN_PLANNER_CLI_COMMAND_H_
#define LLMPLAN_PLANNER_CLI_COMMAND_H_

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "planner/cli/output_files.h"
#include "presets/catalog.h"
#include "scaling/law.h"
#include "base/status.h"

namespace llmplan::planner {

// Options every command shares, filled by the root parser.
struct GlobalOptions {
  std::vector<std::string> preset_files;  // --preset-file, repeatable
  std::vector<std::string> command_line;  // argv, for reports that record how they were made
};

using Action = std::function<Status()>;

// Registers --preset-file (repeatable; each use appends to
// global->preset_files) on `app` and on every subcommand registered so far,
// recursively, so that it may come before or after the command name. Call
// after the add_* functions below.
void add_preset_file_option(CLI::App& app, GlobalOptions* global);

// Flag value checks, for CLI11's Option::check(). A value that fails is a
// usage error (main exits 2) whose one-line message names the flag, e.g.
// "--days: must be a finite number > 0, got inf". CLI11 applies them to
// every value of a list flag.
//
// A real number in [min, max], or (min, max] when min_exclusive. NaN and
// infinities never pass.
CLI::Validator finite_in(double min, double max, bool min_exclusive = false);
// A finite number > 0.
CLI::Validator finite_positive();
// An integer (decimal digits, optional sign) in [min, max].
CLI::Validator int_in(int64_t min, int64_t max);
// A comma-separated list flag given a value: "" is "--flag: empty list".
CLI::Validator non_empty_list();

// Issue 48: a value given on the command line is read as given, never as
// "not given" and never loosely. Every flag that takes a value refuses ""
// ("--gpu: empty value"), and a numeric flag's value (CLI11 type INT, UINT,
// FLOAT, NUMBER) is a decimal number: no hexadecimal, no space around it.
// The message of the first value of `app` and its parsed subcommands that
// breaks this, "" when none does (main exits 2 with it). Run after parsing.
std::string given_value_error(const CLI::App& app);
// [+-]digits[.digits][(e|E)[+-]digits] (or .digits): what a person writes.
bool is_decimal_number(std::string_view text);

// The name in `names` closest to `word` by edit distance (insertions,
// deletions, substitutions and swaps of neighbours each count 1), for a
// "did you mean" hint; empty when none is within max(2, size/3) edits of
// `word`. Ties go to the earlier name. Pure, thread-safe.
std::string closest_name(const std::string& word, const std::vector<std::string>& names);

// Most OpenMP threads --threads may ask for (each one is a real thread).
inline constexpr int kMaxThreads = 1024;

// Built-in presets plus the user's --preset-file entries.
Result<presets::Catalog> load_catalog(const GlobalOptions& global);

// The loss law `--law` names, the same way in every command: a law preset
// (chinchilla, epoch, or one from --preset-file), else a JSON file, which may
// be a law object (scaling/law_json.h) or a result of `llmplan fit` (fit.json
// or fit --format json) as written. A value with a '/' or ending in .json is
// always read as a file. Errors: the file's (NotFound "PATH: cannot open
// file", field errors naming PATH.field), or InvalidArgument "--law: 'X' is
// neither a law preset nor a file: <the catalog's message listing presets>".
Result<scaling::LossLaw> load_law(const presets::Catalog& catalog, const std::string& name_or_file);

// The defaults the planner and `optimal` share (one CLI convention).
inline constexpr const char* kDefaultCluster = "dgx-a100-80gb";
inline constexpr const char* kDefaultLaw = "chinchilla";
// The default law for MoE models (the moe family, an MoE --model or --shapes
// entry) when --law is not given: a dense law cannot rank them.
inline constexpr const char* kDefaultMoeLaw = "joint-moe";

// Output files (write_output_file, OutputDir): planner/cli/output_files.h.
// Writes `text` to standard output and flushes it. IoError "cannot write to
// standard output: <reason>" when the write or the flush fails (a closed
// pipe, a full disk, stdout redirected to /dev/full). main() also checks
// stdout once more before exiting, for output printed piecewise.
Status write_stdout(const std::string& text);

// [presets commands]
// `llmplan presets [--format text|json] [--kind KIND]` lists the presets;
// `llmplan presets show NAME` prints one as JSON.
void add_presets_command(CLI::App& app, const GlobalOptions& global, Action* action);
// [simulator commands]
void add_simulate_command(CLI::App& app, const GlobalOptions& global, Action* action);
// [scaling commands]
// `llmplan fit FILE.csv [--format text|json|md] [--bootstrap K] ...` fits a
// Chinchilla-form law to the user's runs.
void add_fit_command(CLI::App& app, const GlobalOptions& global, Action* action);
// `llmplan optimal --flops C | --gpus G --days D [--gpu NAME | --cluster
// NAME] [--mfu X] | --params N | --tokens D [--law NAME|FILE]
// [--rule law|chinchilla-20 | --tokens-rule chinchilla|law]` prints the
// compute-optimal N, D and predicted loss, and the assumptions it used. Its
// defaults are the planner's: cluster dgx-a100-80gb, law chinchilla, 20
// tokens per parameter (chinchilla-20).
void add_optimal_command(CLI::App& app, const GlobalOptions& global, Action* action);
// [accuracy commands]
// `llmplan validate FILE.csv [--format text|json|md|csv] [--gpu NAME --cluster NAME]
// [--constants FILE]` simulates measured runs and reports the error;
// `llmplan calibrate FILE.csv... --gpu NAME -o FILE` fits the constants.
void add_validate_command(CLI::App& app, const GlobalOptions& global, Action* action);
void add_calibrate_command(CLI::App& app, const GlobalOptions& global, Action* action);
// [planner commands]
// The root command: `llmplan --gpus G --days D [--gpu NAME | --cluster NAME]
// [--budget-usd X] [--objective largest|loss] [--law NAME|FILE]
// [--tokens-per-param R | --tokens-rule chinchilla|law] [--shapes FILE]
// [--max-gpus-used] [--threads N] [--out DIR] [--format md|csv|json]`: the
// largest (or lowest-loss) model trainable by the deadline, with its plan.
// Sets *action only when no subcommand ran and --gpus was given.
void add_plan_options(CLI::App& app, const GlobalOptions& global, Action* action);
// `llmplan sweep --config FILE.json --tp LIST --pp LIST --dp LIST [...]`: a
// grid of plans for one model; time, cost, MFU and the time-cost Pareto front.
void add_sweep_command(CLI::App& app, const GlobalOptions& global, Action* action);
// [frontier commands]
// `llmplan frontier --gpus LIST --days LIST [--gpu LIST | --cluster LIST]
// [--budget-usd LIST] [every planner flag] [--out DIR | --format
// md|csv|json]`: the planner's answer per cell of the grid, simulations
// shared between cells and split over MPI ranks (planner/study/frontier.h).
void add_frontier_command(CLI::App& app, const GlobalOptions& global, Action* action);
// [schedule commands]
// `llmplan schedule (--jobs FILE | --generate N [--seed S]) --gpus G
// [--cluster NAME | --gpu NAME] [--policy NAME|all] [--format md|csv|json]
// [--rescale-cost-s X] [--out DIR]`: a shared cluster running a job trace
// under FIFO, EDF and ElasticFlow-style policies (planner/study/schedule/).
void add_schedule_command(CLI::App& app, const GlobalOptions& global, Action* action);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_CLI_COMMAND_H_

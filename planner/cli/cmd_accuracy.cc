// `llmplan validate` and `llmplan calibrate`: the simulator against measured
// iteration times (planner/accuracy/accuracy.h). This file holds the flags
// and the printing; the work is planner/accuracy/'s (validate_run.h,
// calibrate_run.h).
#include <chrono>
#include <cstdio>
#include <memory>

#include "planner/accuracy/accuracy.h"
#include "planner/accuracy/accuracy_inputs.h"
#include "planner/accuracy/accuracy_json.h"
#include "planner/accuracy/calibrate_run.h"
#include "planner/accuracy/runs_report.h"
#include "planner/accuracy/validate_run.h"
#include "planner/accuracy/validation_report.h"
#include "planner/cli/command.h"
#include "planner/cli/progress.h"
#include "planner/cli/sim_inputs.h"

namespace llmplan::planner {
namespace {

struct AccuracyOptions {
  std::vector<std::string> files;
  std::string format = "text";
  std::string gpu, cluster, constants, output, evaluate;
  std::string out_dir;  // validate --out
  std::string models;   // runs files: the models table (default: models.csv beside the file)
  int folds = 0;        // validate: -1 = the default (5 for runs files)
  int max_iterations = CalibrationOptions().max_iterations;
  int starts = CalibrationOptions().starts;
  bool progress = false;
  bool moe_only = false;  // calibrate: hold the constants in effect, fit only the MoE stage
  bool hybrid_only = false;  // calibrate: hold the constants in effect, fit only ssd_scan_efficiency
  std::string pool_gpu;   // calibrate: the pooled restricted fit's other GPU (#26)
};

// Prints a line to stdout at once (calibrate streams its results); a failed
// write is caught by main's final check of stdout.
void stream_line(const std::string& text) {
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
}

// The rows the flags name, with the presets of --preset-file and the
// command line's rule for --gpu / --cluster on vTrain's rows.
AccuracyInputs inputs_of(const AccuracyOptions& o, const GlobalOptions& global) {
  AccuracyInputs in{.files = o.files, .gpu = o.gpu, .cluster = o.cluster,
                    .constants = o.constants, .models = o.models, .presets = {}};
  in.presets.load_catalog = [&global] { return load_catalog(global); };
  in.presets.resolve_cluster = [](const presets::Catalog& catalog, const std::string& cluster,
                                  const std::string& gpu) {
    return resolve_cluster(catalog, cluster, gpu, 0, "dgx-a100-80gb");
  };
  return in;
}

// Progress messages on stderr through `progress`, when it prints at all.
ProgressSink progress_sink(const std::shared_ptr<Progress>& progress) {
  if (!progress->enabled()) return nullptr;
  return [progress](const std::string& message) { progress->message(message); };
}

// Writes validate --out's four files into `dir`.
Status write_validation_dir(const std::string& dir, const std::string& report_md,
                            const std::string& svg, const std::string& csv,
                            const std::string& json_text) {
  LLMPLAN_ASSIGN_OR_RETURN(OutputDir out, OutputDir::open(dir, "--out", "validate"));
  LLMPLAN_RETURN_IF_ERROR(out.write("report.md", report_md));
  LLMPLAN_RETURN_IF_ERROR(out.write(kValidatePlot, svg));
  LLMPLAN_RETURN_IF_ERROR(out.write("validation.csv", csv));
  LLMPLAN_RETURN_IF_ERROR(out.write("validation.json", json_text));
  LLMPLAN_RETURN_IF_ERROR(out.commit());
  return Status();
}

Status run_validate_runs(const AccuracyOptions& o, const GlobalOptions& global) {
  ValidateRunsOptions vo;
  vo.inputs = inputs_of(o, global);
  vo.folds = o.folds;
  vo.max_iterations = o.max_iterations;
  vo.starts = o.starts;
  auto progress = std::make_shared<Progress>("validate", "", o.progress);
  vo.on_progress = progress_sink(progress);
  LLMPLAN_ASSIGN_OR_RETURN(const RunsValidation v, validate_runs(vo));
  const bool out_dir = !o.out_dir.empty();
  if (out_dir) {
    LLMPLAN_ASSIGN_OR_RETURN(const std::string svg,
                             validation_plot_svg(measured_of(v.cases), v.predicted));
    LLMPLAN_ASSIGN_OR_RETURN(const std::string json_text, runs_validation_json(v));
    LLMPLAN_ASSIGN_OR_RETURN(const std::string csv, runs_validation_csv(v));
    LLMPLAN_RETURN_IF_ERROR(
        write_validation_dir(o.out_dir, runs_validation_report(v, true), svg, csv, json_text));
  }
  std::string out;
  if (o.format == "json") {
    LLMPLAN_ASSIGN_OR_RETURN(out, runs_validation_json(v));
  } else if (o.format == "csv") {
    LLMPLAN_ASSIGN_OR_RETURN(out, runs_validation_csv(v));
  } else {
    out = runs_validation_report(v, o.format == "md");
  }
  return write_stdout(out);
}

Status run_validate(const AccuracyOptions& o, const GlobalOptions& global) {
  LLMPLAN_ASSIGN_OR_RETURN(const bool runs, reads_runs_files(inputs_of(o, global)));
  if (runs) return run_validate_runs(o, global);
  if (o.folds > 0) {
    return Status::invalid_argument("--folds: validate cross-validates runs files only; use "
                                    "llmplan calibrate --folds for vTrain's CSV");
  }
  LLMPLAN_ASSIGN_OR_RETURN(const MeasuredValidation v, validate_measured(inputs_of(o, global)));
  const std::vector<AccuracyCase>& cases = v.cases;
  const std::vector<double>& pred = v.predicted;
  const std::vector<std::string>& notes = v.notes;
  const std::string& gpu_name = v.gpu;
  const std::string source = o.files.front();
  const bool out_dir = !o.out_dir.empty();
  if (out_dir) {
    LLMPLAN_ASSIGN_OR_RETURN(const std::string svg, validation_plot_svg(measured_of(cases), pred));
    LLMPLAN_ASSIGN_OR_RETURN(const std::string json_text,
                             validation_to_json(source, cases, pred, notes));
    LLMPLAN_ASSIGN_OR_RETURN(const std::string csv, validation_csv(cases, pred));
    LLMPLAN_RETURN_IF_ERROR(write_validation_dir(
        o.out_dir, validation_report(source, gpu_name, cases, pred, notes, true, kValidatePlot),
        svg, csv, json_text));
  }
  std::string out;
  if (o.format == "json") {
    LLMPLAN_ASSIGN_OR_RETURN(out, validation_to_json(source, cases, pred, notes));
  } else if (o.format == "csv") {
    LLMPLAN_ASSIGN_OR_RETURN(out, validation_csv(cases, pred));
  } else {
    out = validation_report(source, gpu_name, cases, pred, notes, o.format == "md",
                            out_dir ? o.out_dir + "/" + kValidatePlot : "");
  }
  return write_stdout(out);
}

Status run_calibrate(const AccuracyOptions& o, const GlobalOptions& global) {
  const auto t0 = std::chrono::steady_clock::now();
  CalibrateRunOptions co;
  co.inputs = inputs_of(o, global);
  co.evaluate = o.evaluate;
  co.pool_gpu = o.pool_gpu;
  co.folds = o.folds;
  co.max_iterations = o.max_iterations;
  co.starts = o.starts;
  co.moe_only = o.moe_only;
  co.hybrid_only = o.hybrid_only;
  co.on_line = stream_line;
  // Progress on stderr: "fold 2 of 5: start 1 of 1, iteration 12, cost 1.963".
  auto progress = std::make_shared<Progress>("calibrate", "", o.progress);
  co.on_progress = progress_sink(progress);
  LLMPLAN_ASSIGN_OR_RETURN(const std::string text, run_calibration(co));
  LLMPLAN_RETURN_IF_ERROR(write_output_file(o.output, text, "--output"));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("wrote %s (%.1f s)\n", o.output.c_str(), wall);
  return Status();
}

// The check of --folds: 0 (none) or 2 to kMaxFolds.
CLI::Validator folds_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return text == "0" || int_in(2, kMaxFolds)(text).empty()
                   ? std::string()
                   : "must be 0 (no cross-validation) or from 2 to " + std::to_string(kMaxFolds) +
                         ", got " + text;
      },
      "0 or in [2 - " + std::to_string(kMaxFolds) + "]", "FOLDS");
}

// --max-iterations, --starts and --progress, with the command's help texts.
void add_solver_flags(CLI::App* cmd, AccuracyOptions* o, const std::string& iterations_help,
                      const std::string& starts_help, const std::string& progress_help) {
  cmd->add_option("--max-iterations", o->max_iterations, iterations_help)
      ->capture_default_str()
      ->check(int_in(1, kMaxCalibrationIterations));
  cmd->add_option("--starts", o->starts, starts_help)
      ->capture_default_str()
      ->check(int_in(1, kCalibrationScreenPoints));
  cmd->add_flag("--progress", o->progress, progress_help);
}

}  // namespace

void add_validate_command(CLI::App& app, const GlobalOptions& global, Action* action) {
  auto o = std::make_shared<AccuracyOptions>();
  CLI::App* cmd = app.add_subcommand(
      "validate", "Simulate measured runs (vTrain CSV layout) and report the prediction error");
  cmd->add_option("file", o->files, "Measured-times CSV")->required()->expected(1);
  cmd->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember({"text", "json", "md", "csv"}));
  cmd->add_option("--gpu", o->gpu, "GPU preset (default: vTrain's A100 mapping)");
  cmd->add_option("--cluster", o->cluster, "Cluster preset whose GPU to use");
  cmd->add_option("--constants", o->constants, "Calibrated constants JSON (llmplan calibrate -o)");
  cmd->add_option("--out", o->out_dir,
                  "Also write report.md, predicted_vs_measured.svg, validation.csv and "
                  "validation.json to DIR");
  o->folds = -1;
  cmd->add_option("--models", o->models,
                  "Runs files: the models table (default: models.csv beside the runs file)");
  cmd->add_option("--folds", o->folds,
                  "Runs files: K-fold held-out cross-validation (each fold calibrated on the "
                  "others), 2 to " + std::to_string(kMaxFolds) + ", 0: none (default " +
                      std::to_string(kDefaultRunsFolds) + ")")
      ->check(folds_check());
  add_solver_flags(cmd, o.get(), "Runs files: solver iterations per start of each fold's calibration",
                   "Runs files: screened starting points each fold's calibration polishes",
                   "Progress lines of the folds' calibrations on stderr also when it is not a "
                   "terminal");
  cmd->callback([o, &global, action] { *action = [o, &global] { return run_validate(*o, global); }; });
}

void add_calibrate_command(CLI::App& app, const GlobalOptions& global, Action* action) {
  auto o = std::make_shared<AccuracyOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate", "Fit a GPU's Roofline (and network) constants to measured iteration times");
  cmd->add_option("files", o->files, "Measured-times CSVs")->required();
  cmd->add_option("--gpu", o->gpu, "GPU preset to calibrate")->required();
  cmd->add_option("-o,--output", o->output, "Constants JSON to write")->required();
  cmd->add_option("--constants", o->constants, "Starting constants JSON");
  cmd->add_option("--models", o->models,
                  "Runs files: the models table (default: models.csv beside the runs file)");
  cmd->add_option("--evaluate", o->evaluate, "Also report the error on this held-out CSV");
  cmd->add_option("--folds", o->folds,
                  "Also run K-fold cross-validation (row i in fold i mod K); 2 to " +
                      std::to_string(kMaxFolds) + ", 0: none")
      ->check(folds_check());
  add_solver_flags(cmd, o.get(), "Solver iterations per start",
                   "How many of the " + std::to_string(kCalibrationScreenPoints) +
                       " screened starting points to polish with Ceres",
                   "Progress lines (screen, start, iteration, cost) on stderr also when it is "
                   "not a terminal");
  cmd->add_option("--pool-gpu", o->pool_gpu,
                  "Runs files with releases: fit the restricted dense constants on this GPU's "
                  "dense latest-release rows too (same generation, e.g. gb200 with --gpu b200): "
                  "own GEMM scales, shared attention and host costs; only --gpu's rows are scored");
  cmd->add_flag("--moe-only", o->moe_only,
                "Runs files: hold the dense constants in effect (the preset's or --constants) and "
                "fit only the mixture-of-experts constants, with their held-out figures");
  cmd->add_flag("--hybrid-only", o->hybrid_only,
                "Runs files: hold the constants in effect (the preset's or --constants) and fit "
                "only ssd_scan_efficiency (the Mamba-2 SSD scan) on the rows of models with Mamba "
                "layers, with its leave-one-model-out figures");
  cmd->callback([o, &global, action] { *action = [o, &global] { return run_calibrate(*o, global); }; });
}

}  // namespace llmplan::planner

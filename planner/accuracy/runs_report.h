// Validation of the simulator on a runs file (planner/accuracy/runs_file.h):
// k-fold held-out cross-validation, and the report `llmplan validate` prints
// for it (text, Markdown, JSON, CSV): in-sample and held-out errors overall,
// by source and by feature group, by model, per row (with the memory check),
// and the rows the simulator cannot express, counted by missing feature and
// listed.
#ifndef LLMPLAN_PLANNER_ACCURACY_RUNS_REPORT_H_
#define LLMPLAN_PLANNER_ACCURACY_RUNS_REPORT_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "planner/accuracy/accuracy.h"
#include "planner/accuracy/runs_file.h"

namespace llmplan::planner {

// Held-out predictions of k-fold cross-validation.
struct HeldOut {
  int folds = 0;                  // 0: not run
  std::vector<int> fold;          // of each case
  std::vector<double> predicted;  // of each case, by the fit on the other folds
  std::vector<double> seconds;    // wall time of each fold's calibration
};

// Cross-validates: each fold's constants are calibrated (calibrate()) on the
// dense cases of the other folds (mixture-of-experts cases are predicted,
// never fitted: the constants describe dense layers), starting from
// `initial`, and predict its own cases. `fold[i]` in [0, folds) is the fold of case i. `on_fold` (may be
// empty) gets each fold's index, the fit and its held-out predictions as
// soon as they are known. InvalidArgument when a fold has no case or no
// other fold has a dense case (no training data).
//
// `trainable` (may be null: every case) narrows the training rows further
// (the latest release of each group: latest_release_mask()). Cases of
// several GPUs (a runs file whose rows name their clusters) are
// cross-validated per GPU: each GPU's folds are fitted on that GPU's rows
// only, from that GPU's constants (`initial` when there is one GPU); a fold
// without cases of a GPU is skipped for it. `lenient`: a fold whose other
// folds have no training row leaves its cases' predictions NaN (count them
// with finite_count()) instead of failing.
Result<HeldOut> cross_validate(
    const std::vector<AccuracyCase>& cases, const std::vector<int>& fold, int folds,
    const AccuracyConstants& initial, const CalibrationOptions& options,
    const std::function<void(int fold, const CalibrationResult& fit,
                             const std::vector<double>& test_predicted,
                             const std::vector<double>& test_measured)>& on_fold,
    const std::vector<bool>* trainable = nullptr, bool lenient = false);

// How many of `values` are finite.
int finite_count(const std::vector<double>& values);

// The software-release view of a runs file whose rows state their release
// (the Blackwell form): leave-one-release-out predictions and the stack
// drift of every release.
struct ReleaseView {
  std::vector<std::string> releases;  // in order of first appearance
  HeldOut leave_one_out;              // folds = releases (lenient: NaN where untrainable)
};

// One release's rows against a prediction, as "stack drift": the geometric
// mean of measured / predicted over its rows (> 1: the release ran slower
// than predicted) and its MAPE; `of_latest` whether the rows are the
// calibration rows (latest_release_mask()).
struct ReleaseDrift {
  std::string release;
  std::string gpu;
  bool latest = false;
  int rows = 0;
  double measured_over_predicted = 0;  // geometric mean
  double mape = 0;
};
// Per (release, GPU, latest or older) in order of first appearance, over the
// cases whose prediction is finite. Pure.
std::vector<ReleaseDrift> release_drift(const std::vector<AccuracyCase>& cases,
                                        const std::vector<double>& predicted,
                                        const std::vector<bool>& latest);

// Everything validate reports on a runs file.
struct RunsValidation {
  std::string source;   // the file(s), as given
  std::string gpu;
  std::vector<PublishedRun> runs;  // every row, expressible or not
  std::vector<AccuracyCase> cases; // the expressible rows
  std::vector<double> predicted;   // in-sample (the constants in effect)
  std::vector<bool> fits;          // the simulator's memory check
  std::vector<double> peak_memory_bytes;      // its peak per device (the busiest stage)
  std::vector<double> memory_capacity_bytes;  // the GPU's memory (fits: peak <= capacity)
  HeldOut held_out;
  // Runs files with releases: latest_release_mask() of the cases (empty:
  // every case latest) and the leave-one-release-out view (empty releases:
  // not run).
  std::vector<bool> latest;
  ReleaseView by_release;
  std::vector<std::string> notes;
};

// Rows left out, counted by missing feature (a row missing two features
// counts under each), in name order.
std::map<std::string, int> missing_feature_counts(const std::vector<PublishedRun>& runs);

// {"source", "gpu", "rows", "expressible_rows", "excluded_rows",
//  "not_fitting_rows", "in_sample": {rows, mape, median_ape, max_ape,
//  mean_signed_error}, "held_out": {"folds", "seconds_per_fold": [...],
//  rows, mape, ...} (null when not run), "held_out_mape" (null when not run),
//  "groups": {grouping: [{"key", "rows", "in_sample_mape", "held_out_mape"}]}
//  (groupings: feature_groups(), "moe" among them), "by_model": {model:
//  {"rows" (expressible), "excluded_rows", "moe", "in_sample_mape",
//  "held_out_mape"}} (models in order of first appearance; a MAPE is null
//  without rows or held-out run), "runs": [{"name", "model", "source",
//  "line", "gpus", "t", "p", "d", "v", "ep", "micro_batch", "global_batch",
//  "seq", "zero_stage", "recompute", "measured_s", "predicted_s", "ape",
//  "fits", "peak_memory_bytes", "memory_margin_bytes" (capacity - peak;
//  negative when it does not fit), "fold", "held_out_predicted_s",
//  "held_out_ape"}] (every
//  expressible row), "excluded": {"rows", "by_feature": {feature: rows},
//  "runs": [{"name", "source", "line", "missing": [...]}]}, "band_coverage":
//  {"min_samples", "groups": [{"group", "rows", "p10", "p90", "evaluated",
//  "inside", "coverage"}], "as_selected": {...}} (held_out.h band_coverage;
//  null when not run), "notes": [...]}.
// Errors are fractions. InvalidArgument if a number is not finite.
Result<std::string> runs_validation_json(const RunsValidation& v);
// Text (md = false) or Markdown report: the summary, one table per feature
// grouping, the table by model, every expressible row with its error, and
// the rows left out.
std::string runs_validation_report(const RunsValidation& v, bool md);
// One line per row of the file (excluded rows too, with their missing
// features and no prediction); the last columns are "model", "ep",
// "peak_memory_bytes" and "memory_margin_bytes" (capacity - peak; empty for
// excluded rows).
Result<std::string> runs_validation_csv(const RunsValidation& v);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_ACCURACY_RUNS_REPORT_H_

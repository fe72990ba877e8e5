// `llmplan calibrate` as a function: the staged calibration of a GPU's
// constants on measured rows, without the command line. The stages, in
// order:
//   1. load the rows (accuracy_inputs.h); on runs files, count the rows the
//      simulator cannot express and set the mixture-of-experts rows apart
//      (they are predicted, never fitted with the dense constants);
//   2. runs files whose rows state their release: fit only the latest
//      release of each (system, model, precision), older releases are
//      reported as stack drift;
//   3. --hybrid-only or --moe-only: fit only that stage (calibrate_stages.h)
//      over the constants in effect and stop;
//   4. --pool-gpu: pool the other GPU's dense latest-release rows into every
//      restricted fit (restricted_fit.h);
//   5. --folds K > 1: K-fold held-out cross-validation (and, with releases,
//      leave one release out), printed as it goes;
//   6. the final dense fit (calibrate(), accuracy.h), the stack drift, the
//      mixture-of-experts stage on runs files, and --evaluate's held-out
//      error;
//   7. the constants JSON (constants_to_json, accuracy_json.h) with the
//      provenance line that names the command and the data.
// Every result line goes to `on_line` as it is known (each ends in "\n";
// the error, if any, comes after the lines printed so far).
#ifndef LLMPLAN_PLANNER_ACCURACY_CALIBRATE_RUN_H_
#define LLMPLAN_PLANNER_ACCURACY_CALIBRATE_RUN_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "planner/accuracy/accuracy.h"
#include "planner/accuracy/accuracy_inputs.h"
#include "planner/accuracy/calibrate_stages.h"

namespace llmplan::planner {

// Most cross-validation folds: each fold is a whole calibration (about 26 s
// on the vTrain single-node file), so 20 folds take about ten minutes.
inline constexpr int kMaxFolds = 20;

// Where a calibration reports progress: a whole message such as "fold 2 of
// 5: start 1 of 1, iteration 12, cost 1.963" (for a status line on stderr).
using ProgressSink = std::function<void(const std::string& message)>;

// What `llmplan calibrate` is asked: the rows and presets (`inputs`; --gpu is
// the GPU to calibrate), and its flags.
struct CalibrateRunOptions {
  AccuracyInputs inputs;
  std::string evaluate;  // --evaluate: a held-out file of the same kind ("" for none)
  std::string pool_gpu;  // --pool-gpu: the pooled restricted fit's other GPU (#26)
  int folds = 0;         // --folds: 0 none, else 2 to kMaxFolds
  int max_iterations = CalibrationOptions().max_iterations;
  int starts = CalibrationOptions().starts;
  bool moe_only = false;     // hold the constants in effect, fit only the MoE stage
  bool hybrid_only = false;  // hold the constants in effect, fit only ssd_scan_efficiency
  LineSink on_line;          // the result lines; must be set
  ProgressSink on_progress;  // progress messages; none when empty
};

// Runs the staged calibration (above) and returns the constants JSON to
// write. InvalidArgument for flags that do not go together (messages name
// the flag, e.g. "--moe-only: needs a runs file (MoE rows)"), for rows
// that leave nothing to fit, and for more folds than rows; the loaders' and
// fits' errors.
Result<std::string> run_calibration(const CalibrateRunOptions& options);

// The settings of the fits over `cases`: the solver's `max_iterations` and
// `starts`; the network fitted only with multi-node rows and flash
// attention only where it is used. Progress messages, prefixed with
// *stage (e.g. "fold 2 of 5: "), go to `on_progress` when it is set.
CalibrationOptions fit_options(int max_iterations, int starts,
                               const std::vector<AccuracyCase>& cases,
                               const ProgressSink& on_progress,
                               const std::shared_ptr<std::string>& stage);

// The restricted dense fit (#26, restricted_fit.h): runs files whose rows
// state their release (the Blackwell form) hold what their few dense rows
// cannot determine at the h100-sxm preset's calibration scaled by datasheet
// ratios; sets copt->prior_reference to that preset for such rows (else
// nothing). calibrate() applies it only where the rows are too few for the
// full fit. Errors: the presets'.
Status set_prior_reference(const PresetAccess& presets, const std::vector<AccuracyCase>& cases,
                           CalibrationOptions* copt);

// The fold of each case: i mod k for vTrain's CSV (as always), by
// configuration for runs files (`runs`; assign_folds).
std::vector<int> folds_of(const std::vector<AccuracyCase>& cases, int k, bool runs);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_ACCURACY_CALIBRATE_RUN_H_

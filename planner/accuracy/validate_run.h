// `llmplan validate` as functions. On runs files (runs_file.h): the rows
// predicted with the constants in effect, then K-fold held-out
// cross-validation (each fold calibrated on the dense rows of the others)
// and, for rows with releases, leave one release out; the result is the
// RunsValidation that runs_report.h prints. On vTrain's measured CSV: the
// rows and their predictions, which validation_report.h prints.
#ifndef LLMPLAN_PLANNER_ACCURACY_VALIDATE_RUN_H_
#define LLMPLAN_PLANNER_ACCURACY_VALIDATE_RUN_H_

#include <string>
#include <vector>

#include "base/status.h"
#include "planner/accuracy/accuracy.h"
#include "planner/accuracy/accuracy_inputs.h"
#include "planner/accuracy/calibrate_run.h"
#include "planner/accuracy/runs_report.h"

namespace llmplan::planner {

// Default folds of validate on a runs file.
inline constexpr int kDefaultRunsFolds = 5;

// What `llmplan validate` is asked for runs files.
struct ValidateRunsOptions {
  AccuracyInputs inputs;
  int folds = -1;  // 0: none, -1: kDefaultRunsFolds, else 2 to kMaxFolds
  int max_iterations = CalibrationOptions().max_iterations;  // of each fold's calibration
  int starts = CalibrationOptions().starts;                  // of each fold's calibration
  ProgressSink on_progress;  // the folds' progress messages; none when empty
};

// The validation of the runs files `options.inputs` names: every row, the
// expressible rows' in-sample predictions with the memory check and, with
// folds, the held-out predictions. InvalidArgument "--folds: ..." for more
// folds than expressible rows; the loaders' and fits' errors.
Result<RunsValidation> validate_runs(const ValidateRunsOptions& options);

// validate on vTrain's measured CSV: the cases, their predictions with the
// constants in effect, the notes on the mapping and the GPU's name.
struct MeasuredValidation {
  std::vector<AccuracyCase> cases;
  std::vector<double> predicted;
  std::vector<std::string> notes;
  std::string gpu;
};

// The validation of the measured CSVs `inputs` names. Errors: the
// loaders' (load_measured_cases) and the simulator's.
Result<MeasuredValidation> validate_measured(const AccuracyInputs& inputs);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_ACCURACY_VALIDATE_RUN_H_

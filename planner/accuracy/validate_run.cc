// validate's run on runs files (validate_run.h).
#include "planner/accuracy/validate_run.h"

#include <algorithm>
#include <memory>

namespace llmplan::planner {
namespace {

// The held-out predictions of `folds` folds (folds > 1) and, with releases,
// of leave one release out, with their notes.
Status held_out_folds(const ValidateRunsOptions& o, int folds, RunsValidation* v) {
  auto stage = std::make_shared<std::string>();
  CalibrationOptions copt =
      fit_options(o.max_iterations, o.starts, v->cases, o.on_progress, stage);
  LLMPLAN_RETURN_IF_ERROR(set_prior_reference(o.inputs.presets, v->cases, &copt));
  const std::vector<int> fold = folds_of(v->cases, folds, true);
  *stage = "fold 1 of " + std::to_string(folds) + ": ";
  if (!o.inputs.constants.empty()) {
    v->notes.push_back("held-out folds calibrate from the constants in effect (" +
                       o.inputs.constants + ")");
  }
  LLMPLAN_ASSIGN_OR_RETURN(
      v->held_out,
      cross_validate(v->cases, fold, folds, constants_of(v->cases.front()), copt,
                     [&](int f, const CalibrationResult&, const std::vector<double>&,
                         const std::vector<double>&) {
                       *stage = "fold " + std::to_string(f + 2) + " of " +
                                std::to_string(folds) + ": ";
                     },
                     v->latest.empty() ? nullptr : &v->latest));
  v->notes.push_back(std::to_string(folds) +
                     "-fold held-out: each fold calibrates (llmplan calibrate's fit, --starts " +
                     std::to_string(o.starts) + ", --max-iterations " +
                     std::to_string(o.max_iterations) +
                     ") on the dense rows of the other folds (mixture-of-experts rows are "
                     "predicted, never fitted); rows of one configuration share a fold" +
                     (v->latest.empty() ? std::string()
                                       : "; per GPU kind, fitted on the latest release of "
                                         "each (system, model, precision) only"));
  if (!v->latest.empty()) {
    std::vector<std::string> releases;
    const std::vector<int> by_release = release_folds(v->cases, &releases);
    if (releases.size() > 1) {
      *stage = "leave-one-release-out: ";
      LLMPLAN_ASSIGN_OR_RETURN(
          v->by_release.leave_one_out,
          cross_validate(v->cases, by_release, static_cast<int>(releases.size()),
                         constants_of(v->cases.front()), copt, nullptr, nullptr,
                         /*lenient=*/true));
      v->by_release.releases = releases;
      v->notes.push_back(
          "leave-one-release-out: each release's rows predicted by a fit (per GPU kind) on "
          "the dense rows of every other release");
    }
  }
  return Status();
}

}  // namespace

Result<RunsValidation> validate_runs(const ValidateRunsOptions& o) {
  RunsValidation v;
  LLMPLAN_ASSIGN_OR_RETURN(v.cases, load_runs_cases(o.inputs, &v.runs, &v.notes, &v.gpu));
  if (fits_latest_release(v.cases)) {
    v.latest = latest_release_mask(v.cases);
    std::vector<std::string> gpus;
    for (const AccuracyCase& c : v.cases) {
      if (std::find(gpus.begin(), gpus.end(), c.config.cluster.gpu.name) == gpus.end()) {
        gpus.push_back(c.config.cluster.gpu.name);
      }
    }
    v.gpu.clear();
    for (const std::string& g : gpus) v.gpu += (v.gpu.empty() ? "" : ", ") + g;
  }
  for (const std::string& f : o.inputs.files) v.source += (v.source.empty() ? "" : " ") + f;
  LLMPLAN_ASSIGN_OR_RETURN(v.predicted,
                           predict_iteration_times(v.cases, nullptr, &v.fits, &v.peak_memory_bytes,
                                                   &v.memory_capacity_bytes));
  const int folds = o.folds < 0 ? kDefaultRunsFolds : o.folds;
  if (folds > static_cast<int>(v.cases.size())) {
    return Status::invalid_argument("--folds: " + std::to_string(folds) + " folds for " +
                                    std::to_string(v.cases.size()) +
                                    " expressible rows; give at most " +
                                    std::to_string(v.cases.size()) + " (or 0: none)");
  }
  if (folds > 1) LLMPLAN_RETURN_IF_ERROR(held_out_folds(o, folds, &v));
  return v;
}

Result<MeasuredValidation> validate_measured(const AccuracyInputs& inputs) {
  MeasuredValidation v;
  LLMPLAN_ASSIGN_OR_RETURN(v.cases, load_measured_cases(inputs, &v.notes, &v.gpu));
  LLMPLAN_ASSIGN_OR_RETURN(v.predicted, predict_iteration_times(v.cases, nullptr));
  return v;
}

}  // namespace llmplan::planner

// What `llmplan calibrate` records about the accuracy of a GPU's constants
// (simulator::GpuValidation): the MFU range of the measured runs and the
// distribution of held-out errors of k-fold cross-validation, printed in the
// JSON form of a GPU preset's "validation" object.
#ifndef LLMPLAN_PLANNER_ACCURACY_HELD_OUT_H_
#define LLMPLAN_PLANNER_ACCURACY_HELD_OUT_H_

#include <string>
#include <utility>
#include <vector>

#include "planner/accuracy/accuracy.h"

namespace llmplan::planner {

// The probabilities calibrate reports quantiles at.
inline constexpr double kValidationProbabilities[] = {0.05, 0.10, 0.25, 0.50, 0.75, 0.90, 0.95};

// Quantiles of `values` at `probabilities` (each in [0, 1]): the empirical
// quantile with linear interpolation between order statistics (position
// p * (n - 1) in the sorted values; numpy's default, Hyndman-Fan type 7).
// REQUIRES: values non-empty. Pure.
std::vector<std::pair<double, double>> empirical_quantiles(
    std::vector<double> values, const std::vector<double>& probabilities);

// Model FLOPs utilisation of each measured run: model FLOPs per iteration
// (Model::model_flops_per_step: no recomputation counted) / (measured
// iteration time * GPUs * the GPU's peak at the run's precision).
std::vector<double> measured_mfu(const std::vector<AccuracyCase>& cases);

// The lines calibrate prints after cross-validation: the held-out ratio
// measured / predicted at kValidationProbabilities, the MFU range of the
// measured runs, and both as the JSON of a GPU preset's "validation"
// object (simulator/cluster_json.h), ready to paste, its source naming the
// command that reproduces it ("llmplan calibrate <the cases' CSVs> --gpu
// <GPU> -o FILE --folds <folds>"). REQUIRES: held_out_predicted.size() ==
// cases.size() > 0.
std::string held_out_report(const std::vector<AccuracyCase>& cases,
                            const std::vector<double>& held_out_predicted, int folds);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_ACCURACY_HELD_OUT_H_

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
#include "simulator/error_band.h"

namespace llmplan::planner {

// The probabilities calibrate reports quantiles at.
inline constexpr double kValidationProbabilities[] = {0.05, 0.10, 0.25, 0.50, 0.75, 0.90, 0.95};

// Quantiles of `values` at `probabilities` (each in [0, 1]): the empirical
// quantile with linear interpolation between order statistics (position
// p * (n - 1) in the sorted values; numpy's default, Hyndman-Fan type 7).
// REQUIRES: values non-empty. Pure.
std::vector<std::pair<double, double>> empirical_quantiles(
    std::vector<double> values, const std::vector<double>& probabilities);

// Quantiles of `values` as a prediction band for one more value like them:
// position p * (n + 1) in the sorted values counted from 1, interpolated
// linearly and clamped to the first and last value (Hyndman-Fan type 6,
// the Weibull plotting position). For exchangeable values, a new one falls
// below the quantile at p with probability p (up to the interpolation), so
// P10-P90 holds about 80 % of new runs even when n is small; the type-7
// quantile above is the sample's own and holds a new run less often (about
// (n - 1) * 0.8 / (n + 1): 67 % for n = 11). The error band and its
// coverage check use these. REQUIRES: values non-empty. Pure.
std::vector<std::pair<double, double>> prediction_quantiles(
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
                            const std::vector<double>& held_out_predicted,
                            const std::vector<int>& fold, int folds);

// The band features of a measured case: its stack (AccuracyCase::stack),
// model, plan and GPUs (simulator/error_band.h).
simulator::BandFeatures case_band_features(const AccuracyCase& c);

// The conditional band: for every group of band_group_keys() (pooled band
// excluded) that holds at least `min_samples` of the rows, the quantiles of
// their ratios measured / predicted at `probabilities`
// (prediction_quantiles), ordered coarse to
// fine, then by key. REQUIRES: features.size() == ratio.size(). Pure.
std::vector<simulator::GpuValidation::Group> band_groups(
    const std::vector<simulator::BandFeatures>& features, const std::vector<double>& ratio,
    const std::vector<double>& probabilities, int min_samples = simulator::kMinBandSamples);

// How often the band holds the held-out measured time, judged honestly: the
// band a row is checked against is built only from the rows of the other
// folds (its own error never enters its own band).
struct BandCoverage {
  std::string key;          // group key, simulator::kPooledBandKey, or "as selected"
  int rows = 0;             // rows in the group
  // The group's band over all its rows (what a preset stores;
  // prediction_quantiles).
  double p10 = 0, p90 = 0;
  int evaluated = 0;        // rows whose other folds hold rows of the group
  int inside = 0;           // of those, inside P10..P90 of the other folds' rows
  double coverage() const { return evaluated > 0 ? static_cast<double>(inside) / evaluated : 0; }
};
struct BandCheck {
  int min_samples = simulator::kMinBandSamples;
  // The pooled band, then every group with >= min_samples rows (band_groups'
  // order); each row checked against its group's band.
  std::vector<BandCoverage> groups;
  // Every row checked against the band the planner's rule would give it
  // (error_band(): the finest group with >= min_samples rows of the other
  // folds, else their pooled band); p10 / p90 are 0.
  BandCoverage selected;
};
// REQUIRES: features, ratio and fold of one size; fold[i] >= 0. Pure.
BandCheck band_coverage(const std::vector<simulator::BandFeatures>& features,
                        const std::vector<double>& ratio, const std::vector<int>& fold,
                        int min_samples = simulator::kMinBandSamples);
// The coverage table (text or Markdown): group, rows, P10, P90, coverage.
std::string band_coverage_table(const BandCheck& check, bool md);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_ACCURACY_HELD_OUT_H_

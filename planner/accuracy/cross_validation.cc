// K-fold held-out cross-validation and the stack drift of each release
// (runs_report.h: cross_validate, finite_count, release_drift).
#include <algorithm>
#include <chrono>
#include <cmath>

#include "planner/accuracy/runs_report.h"

namespace llmplan::planner {

Result<HeldOut> cross_validate(
    const std::vector<AccuracyCase>& cases, const std::vector<int>& fold, int folds,
    const AccuracyConstants& initial, const CalibrationOptions& options,
    const std::function<void(int, const CalibrationResult&, const std::vector<double>&,
                             const std::vector<double>&)>& on_fold,
    const std::vector<bool>* trainable, bool lenient) {
  HeldOut out;
  out.folds = folds;
  out.fold = fold;
  out.predicted.assign(cases.size(), std::nan(""));
  out.seconds.assign(static_cast<size_t>(std::max(folds, 0)), 0.0);
  // The GPUs, in order of first appearance: each is cross-validated alone.
  std::vector<std::string> gpus;
  for (const AccuracyCase& c : cases) {
    if (std::find(gpus.begin(), gpus.end(), c.config.cluster.gpu.name) == gpus.end()) {
      gpus.push_back(c.config.cluster.gpu.name);
    }
  }
  for (const std::string& gpu : gpus) {
    AccuracyConstants start = initial;
    if (gpus.size() > 1) {
      for (const AccuracyCase& c : cases) {
        if (c.config.cluster.gpu.name == gpu) {
          start = constants_of(c);
          break;
        }
      }
    }
    for (int f = 0; f < folds; ++f) {
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<AccuracyCase> train, test;
      std::vector<size_t> test_index;
      for (size_t i = 0; i < cases.size(); ++i) {
        if (cases[i].config.cluster.gpu.name != gpu) continue;
        if (fold[i] == f) {
          test.push_back(cases[i]);
          test_index.push_back(i);
        } else if (!cases[i].config.model.is_moe() &&
                   (trainable == nullptr || (*trainable)[i])) {
          // MoE rows are predicted, never fitted: the constants describe
          // dense layers (calibrate leaves them out too).
          train.push_back(cases[i]);
        }
      }
      if (test.empty() && gpus.size() > 1) continue;  // no row of this GPU in the fold
      if (train.empty() && lenient && !test.empty()) continue;  // predictions stay NaN
      if (test.empty() || train.empty()) {
        return Status::invalid_argument(
            "--folds: fold " + std::to_string(f) + " of " + std::to_string(folds) + " has " +
            (test.empty() ? "no rows"
                          : "every trainable dense row" +
                                (gpus.size() > 1 ? " of GPU " + gpu : std::string()) +
                                " (MoE rows and older releases are not fitted)") +
            "; give fewer folds");
      }
      LLMPLAN_ASSIGN_OR_RETURN(CalibrationResult fit, calibrate(train, start, options));
      apply_constants(fit.constants, &test);
      LLMPLAN_ASSIGN_OR_RETURN(std::vector<double> p, predict_iteration_times(test, nullptr));
      for (size_t j = 0; j < p.size(); ++j) out.predicted[test_index[j]] = p[j];
      out.seconds[static_cast<size_t>(f)] +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (on_fold) on_fold(f, fit, p, measured_of(test));
    }
  }
  return out;
}

int finite_count(const std::vector<double>& values) {
  int n = 0;
  for (double v : values) n += std::isfinite(v) ? 1 : 0;
  return n;
}

std::vector<ReleaseDrift> release_drift(const std::vector<AccuracyCase>& cases,
                                        const std::vector<double>& predicted,
                                        const std::vector<bool>& latest) {
  std::vector<ReleaseDrift> out;
  std::vector<double> log_sum;
  for (size_t i = 0; i < cases.size(); ++i) {
    if (!std::isfinite(predicted[i]) || !(predicted[i] > 0)) continue;
    const bool is_latest = latest.empty() || latest[i];
    const std::string& gpu = cases[i].config.cluster.gpu.name;
    auto it = std::find_if(out.begin(), out.end(), [&](const ReleaseDrift& d) {
      return d.release == cases[i].release && d.gpu == gpu && d.latest == is_latest;
    });
    if (it == out.end()) {
      out.push_back({cases[i].release, gpu, is_latest, 0, 0, 0});
      log_sum.push_back(0);
      it = out.end() - 1;
    }
    const size_t k = static_cast<size_t>(it - out.begin());
    const double meas = cases[i].run.iteration_time_s;
    ++it->rows;
    log_sum[k] += std::log(meas / predicted[i]);
    it->mape += std::abs(predicted[i] - meas) / meas;
  }
  for (size_t k = 0; k < out.size(); ++k) {
    out[k].measured_over_predicted = std::exp(log_sum[k] / out[k].rows);
    out[k].mape /= out[k].rows;
  }
  return out;
}

}  // namespace llmplan::planner

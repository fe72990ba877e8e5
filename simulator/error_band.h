// The error band of a simulated iteration time: how far the measured time
// may lie from the prediction, from the held-out errors of the GPU's
// validation (GpuValidation in cluster.h).
//
// The band is a distribution of the ratio measured / predicted iteration
// time. A planner turns a predicted training time T into a band
// [T * ratio_at(0.10), T * ratio_at(0.90)] and, for a confidence P, asks
// whether T * ratio_at(P) still meets the deadline. Training days and cost
// scale with iteration time, so the same ratios apply to them.
#ifndef LLMPLAN_SIMULATOR_ERROR_BAND_H_
#define LLMPLAN_SIMULATOR_ERROR_BAND_H_

#include <string>
#include <utility>
#include <vector>

#include "simulator/cluster.h"

namespace llmplan::simulator {

// A plain value; cheap to copy, safe to share between threads.
struct ErrorBand {
  // False for a GPU whose constants were never validated: the error is
  // unknown, reports say so instead of showing a band, and ratio_at()
  // returns 1 (the point estimate).
  bool known = false;
  // (probability, measured / predicted), probabilities strictly increasing,
  // ratios non-decreasing (validate(GpuValidation)).
  std::vector<std::pair<double, double>> quantiles;
  int samples = 0;     // held-out runs behind the quantiles
  std::string source;  // the command and data that produced them

  // The ratio measured / predicted at probability p: linear interpolation
  // between the stored quantiles, clamped to the first and last one outside
  // their range (it never extrapolates). 1 when !known. p outside [0, 1] is
  // clamped. Thread-safe.
  double ratio_at(double p) const;
  // "error unknown (uncalibrated GPU)" or e.g. "P10-P90 -4.1 % .. +9.0 %
  // (measured vs predicted over 1549 held-out runs)".
  std::string describe() const;
};

// The band of `gpu`: known when the GPU is calibrated and carries held-out
// quantiles. Pure; thread-safe.
ErrorBand error_band(const GpuSpec& gpu);

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_ERROR_BAND_H_

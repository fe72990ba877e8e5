#include "simulator/error_band.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace llmplan::simulator {

double ErrorBand::ratio_at(double p) const {
  if (!known || quantiles.empty()) return 1.0;
  if (!(p >= 0)) p = 0;  // NaN too
  p = std::min(p, 1.0);
  if (p <= quantiles.front().first) return quantiles.front().second;
  if (p >= quantiles.back().first) return quantiles.back().second;
  const auto upper =
      std::upper_bound(quantiles.begin(), quantiles.end(), p,
                       [](double x, const std::pair<double, double>& q) { return x < q.first; });
  const auto lower = upper - 1;
  const double w = (p - lower->first) / (upper->first - lower->first);
  return lower->second + w * (upper->second - lower->second);
}

std::string ErrorBand::describe() const {
  if (!known) return "error unknown (uncalibrated GPU)";
  const auto signed_pct = [](double ratio) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.1f %%", 100.0 * (ratio - 1.0));
    return std::string(buf);
  };
  return "P10-P90 " + signed_pct(ratio_at(0.10)) + " .. " + signed_pct(ratio_at(0.90)) +
         " (measured vs predicted over " + std::to_string(samples) + " held-out runs)";
}

ErrorBand error_band(const GpuSpec& gpu) {
  ErrorBand band;
  const GpuValidation& v = gpu.validation;
  band.known = v.calibrated && !v.quantiles.empty();
  if (!band.known) return band;
  band.quantiles = v.quantiles;
  band.samples = v.samples;
  band.source = v.held_out_source;
  return band;
}

}  // namespace llmplan::simulator

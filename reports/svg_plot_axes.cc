#include "reports/svg_plot_axes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace llmplan::reports::plot_axes {
namespace {

constexpr double kPadFraction = 0.05;  // of the axis span, each side, for automatic ranges

// "1.5", "0.02", "3e+09" -> "3e9": short labels for tick values.
std::string number_label(double v, double step) {
  if (v == 0) return "0";
  const double a = std::fabs(v);
  if (a >= 1e-3 && a < 1e5) {
    const int decimals = std::clamp(static_cast<int>(-std::floor(std::log10(step) + 1e-9)), 0, 6);
    return fmt::format("{:.{}f}", v, decimals);
  }
  return svg_short_number(v);
}

std::vector<Tick> linear_ticks(double lo, double hi) {
  const double raw = (hi - lo) / 6;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  std::vector<Tick> ticks;
  for (double k = std::ceil(lo / step - 1e-9); k * step <= hi + 1e-9 * step; k += 1) {
    const double v = std::fabs(k) < 1e-12 ? 0 : k * step;
    ticks.push_back({v, svg_escape(number_label(v, step))});
  }
  return ticks;
}

std::vector<Tick> log_ticks(double lo, double hi) {
  const double llo = std::log10(lo), lhi = std::log10(hi);
  const int first = static_cast<int>(std::ceil(llo - 1e-9));
  const int last = static_cast<int>(std::floor(lhi + 1e-9));
  std::vector<Tick> ticks;
  if (last - first + 1 >= 2) {  // decades
    const int stride = std::max(1, (last - first + 8) / 8);
    for (int k = first; k <= last; ++k) {
      if ((k - first) % stride != 0) continue;
      std::string label =
          k >= -3 && k <= 4
              ? number_label(std::pow(10.0, k), std::pow(10.0, std::min(k, 0)))
              : fmt::format("10<tspan dy=\"-0.5em\" font-size=\"0.75em\">{}</tspan>", k);
      ticks.push_back({std::pow(10.0, k), label});
    }
    return ticks;
  }
  // Under two decades: 1-2-5 mantissas, or round linear steps when the range
  // is too narrow for three of those (e.g. losses from 1.8 to 3.6).
  for (int k = static_cast<int>(std::floor(llo)); k <= static_cast<int>(std::ceil(lhi)); ++k) {
    for (double m : {1.0, 2.0, 5.0}) {
      const double v = m * std::pow(10.0, k);
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) {
        ticks.push_back({v, svg_escape(number_label(v, std::pow(10.0, k)))});
      }
    }
  }
  return ticks.size() >= 3 ? ticks : linear_ticks(lo, hi);
}

}  // namespace

Status check_axis(const PlotAxis& axis, const char* name) {
  const std::string where = std::string(name) + " axis";
  const bool has_min = !std::isnan(axis.min), has_max = !std::isnan(axis.max);
  if ((has_min && !std::isfinite(axis.min)) || (has_max && !std::isfinite(axis.max))) {
    return Status::invalid_argument(where + ": range must be finite");
  }
  if (axis.log_scale && ((has_min && axis.min <= 0) || (has_max && axis.max <= 0))) {
    return Status::invalid_argument(where + ": a log axis needs a positive range");
  }
  if (has_min && has_max && axis.min >= axis.max) {
    return Status::invalid_argument(where + ": min must be below max");
  }
  return Status();
}

Status check_value(double v, bool log, const std::string& where) {
  if (!std::isfinite(v)) return Status::invalid_argument(where + ": value is not finite");
  if (log && v <= 0) {
    return Status::invalid_argument(where + ": " + fmt::format("{:g}", v) +
                                    " cannot be drawn on a log axis");
  }
  return Status();
}

Scale make_scale(const PlotAxis& axis, std::vector<double> values, double pixel_lo,
                 double pixel_hi) {
  Scale s;
  s.log = axis.log_scale;
  s.pixel_lo = pixel_lo;
  s.pixel_hi = pixel_hi;
  if (!std::isnan(axis.min)) values.push_back(axis.min);
  if (!std::isnan(axis.max)) values.push_back(axis.max);
  auto [lo_it, hi_it] = std::minmax_element(values.begin(), values.end());
  double lo = s.transform(*lo_it), hi = s.transform(*hi_it);
  if (hi - lo < 1e-12 * std::max(1.0, std::fabs(lo))) {  // one value: give it room
    const double half = s.log ? 0.3 : std::max(1e-9, std::fabs(lo) * 0.1 + (lo == 0 ? 1 : 0));
    lo -= half;
    hi += half;
  } else {
    const double pad = kPadFraction * (hi - lo);
    lo -= pad;
    hi += pad;
  }
  auto back = [&](double t) { return s.log ? std::pow(10.0, t) : t; };
  s.lo = std::isnan(axis.min) ? back(lo) : axis.min;
  s.hi = std::isnan(axis.max) ? back(hi) : axis.max;
  return s;
}

std::vector<Tick> ticks_for(const Scale& s) {
  return s.log ? log_ticks(s.lo, s.hi) : linear_ticks(s.lo, s.hi);
}


}  // namespace llmplan::reports::plot_axes

// The axes of a plot (svg_plot.h's render_svg): checking an axis and its
// values, the scale that maps data to pixels (linear or log, padded
// automatic ranges) and the tick marks with their labels. Internal to the
// plot's files.
#ifndef LLMPLAN_REPORTS_SVG_PLOT_AXES_H_
#define LLMPLAN_REPORTS_SVG_PLOT_AXES_H_

#include <cmath>
#include <string>
#include <vector>

#include "base/status.h"
#include "reports/svg_plot.h"

namespace llmplan::reports::plot_axes {

// A resolved axis: range and the mapping of data values to pixels.
struct Scale {
  bool log = false;
  double lo = 0, hi = 1;              // data range
  double pixel_lo = 0, pixel_hi = 1;  // pixels for lo and hi
  double transform(double v) const { return log ? std::log10(v) : v; }
  double to_pixel(double v) const {
    const double t = (transform(v) - transform(lo)) / (transform(hi) - transform(lo));
    return pixel_lo + t * (pixel_hi - pixel_lo);
  }
};

struct Tick {
  double value = 0;
  std::string label;  // SVG text content (may hold a <tspan>)
};

// InvalidArgument for an axis range that is not finite, not positive on a
// log axis, or empty (min >= max).
Status check_axis(const PlotAxis& axis, const char* name);
// InvalidArgument for a value that is not finite, or not positive on a log
// axis; `where` names it.
Status check_value(double v, bool log, const std::string& where);
// The range of one axis from its explicit limits, else the values, padded.
Scale make_scale(const PlotAxis& axis, std::vector<double> values, double pixel_lo,
                 double pixel_hi);
// The ticks of a scale: decades or 1-2-5 steps on a log axis, round steps
// on a linear one.
std::vector<Tick> ticks_for(const Scale& s);

}  // namespace llmplan::reports::plot_axes

#endif  // LLMPLAN_REPORTS_SVG_PLOT_AXES_H_

// A small, dependency-free SVG chart writer: line and scatter series on
// linear or logarithmic axes, with tick labels, axis titles, a legend and
// optional reference lines (y = x, horizontal, vertical). Used for the
// scaling-law plots, the planner's days-vs-size and Pareto plots, and any
// report that wants a figure.
//
// Everything is a pure function of the Plot value: the same Plot always gives
// byte-identical SVG text, on any thread.
#ifndef LLMPLAN_REPORTS_SVG_PLOT_H_
#define LLMPLAN_REPORTS_SVG_PLOT_H_

#include <limits>
#include <string>
#include <vector>

#include "simulator/status.h"

namespace llmplan::reports {

enum class SeriesKind {
  kLine,     // points joined in the given order
  kScatter,  // one marker per point
};

// One data series. x and y have the same length.
struct PlotSeries {
  std::string label;  // legend text; empty: not in the legend
  SeriesKind kind = SeriesKind::kLine;
  std::vector<double> x, y;
  std::string color;    // any SVG colour; empty: the next palette colour
  bool dashed = false;  // lines only
};

enum class ReferenceKind {
  kIdentity,    // y = x (ignores value), e.g. predicted vs measured
  kHorizontal,  // y = value, e.g. a loss floor
  kVertical,    // x = value, e.g. a deadline
};

// A thin grey guide line across the plot area; labelled ones join the legend.
struct ReferenceLine {
  ReferenceKind kind = ReferenceKind::kHorizontal;
  double value = 0;
  std::string label;
};

struct PlotAxis {
  std::string title;
  bool log_scale = false;
  // Range; NaN means "from the data and references" (padded a little).
  double min = std::numeric_limits<double>::quiet_NaN();
  double max = std::numeric_limits<double>::quiet_NaN();
};

struct Plot {
  std::string title;
  PlotAxis x, y;
  std::vector<PlotSeries> series;
  std::vector<ReferenceLine> references;
  int width_px = 720;
  int height_px = 480;
};

// Renders `plot` as a standalone <svg> element (no XML prolog, so it can be
// inlined in Markdown/HTML or written to a .svg file). Text is XML-escaped.
// Errors (InvalidArgument, naming the series or axis): x and y of different
// lengths, a non-finite value, a non-positive value or range on a log axis,
// no data at all, min >= max, or a size under 200 x 150 px.
Result<std::string> render_svg(const Plot& plot);

}  // namespace llmplan::reports

#endif  // LLMPLAN_REPORTS_SVG_PLOT_H_

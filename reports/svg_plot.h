// A small, dependency-free SVG chart writer: line and scatter series on
// linear or logarithmic axes, with tick labels, axis titles, a legend (to the
// right of the data area, never over it), optional reference lines (y = x,
// horizontal, vertical) with an optional label at the axis ("deadline 30 d"),
// and highlighted points with a label ("the answer"). Line series get
// distinct dash patterns and scatter series distinct marker shapes, so the
// series stay apart in grey print and for colour-blind readers. Used for the
// scaling-law plots, the planner's days-vs-size and Pareto plots, and any
// report that wants a figure.
//
// Everything is a pure function of the Plot value: the same Plot always gives
// byte-identical SVG text, on any thread.
#ifndef LLMPLAN_REPORTS_SVG_PLOT_H_
#define LLMPLAN_REPORTS_SVG_PLOT_H_

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "base/status.h"

namespace llmplan::reports {

// Text for an SVG (XML) document: &, <, > and " escaped, control characters
// other than tab (not allowed in XML 1.0) written as spaces. Shared by the
// SVG writers here (plots, heatmaps).
std::string svg_escape(const std::string& text);
// 64-bit FNV-1a of `text`: deterministic ids (clip paths, gradients) that
// differ between figures of one page.
uint64_t svg_hash(const std::string& text);

// v as printf's "%.3g" with the exponent's '+' and leading zeros dropped
// ("1.5", "0.02", "3e9", "1e-5"): the plots' and heatmaps' short numbers.
std::string svg_short_number(double v);

enum class SeriesKind {
  kLine,     // points joined in the given order
  kScatter,  // one marker per point
};

// The stroke of a line series. kAuto gives each line series of a plot its
// own pattern, in the order below, skipping patterns that series of the same
// plot ask for explicitly (the cycle repeats after five).
enum class LineStyle { kAuto, kSolid, kDashed, kDotted, kDashDot, kLongDash };

// The marker of a scatter series; kAuto works like LineStyle::kAuto.
enum class MarkerShape { kAuto, kCircle, kSquare, kTriangle, kDiamond, kCross };

// One data series. x and y have the same length.
struct PlotSeries {
  std::string label;  // legend text; empty: not in the legend
  SeriesKind kind = SeriesKind::kLine;
  std::vector<double> x, y;
  std::string color;                   // any SVG colour; empty: the next palette colour
  bool dashed = false;                 // lines only; the same as style = kDashed (older spelling)
  LineStyle style = LineStyle::kAuto;  // lines only; `dashed` wins when set
  MarkerShape marker = MarkerShape::kAuto;  // scatter only
};

enum class ReferenceKind {
  kIdentity,    // y = x (ignores value), e.g. predicted vs measured
  kHorizontal,  // y = value, e.g. a loss floor
  kVertical,    // x = value, e.g. a deadline
};

// A thin grey guide line across the plot area; labelled ones join the legend.
// An axis_label is written where the line meets the frame, with a tick mark:
// above the top edge for a vertical line (e.g. "deadline 30 d"), inside the
// right end of the line for a horizontal one. kIdentity ignores axis_label.
struct ReferenceLine {
  ReferenceKind kind = ReferenceKind::kHorizontal;
  double value = 0;
  std::string label;
  std::string axis_label{};  // {}: older three-field initialisers stay warning-free
};

// One point to stand out, e.g. the planner's answer: a ring around a filled
// dot at (x, y), with `label` written beside it (placed to stay inside the
// plot). It is counted in the automatic axis ranges. Not in the legend.
struct PlotHighlight {
  double x = 0, y = 0;
  std::string label;
  std::string color;  // empty: "#d62728" (red)
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
  std::vector<PlotHighlight> highlights;
  int width_px = 720;
  int height_px = 480;
};

// Renders `plot` as a standalone <svg> element (no XML prolog, so it can be
// inlined in Markdown/HTML or written to a .svg file). Text is XML-escaped.
// Errors (InvalidArgument, naming the series or axis): x and y of different
// lengths, a non-finite value (of a series, reference or highlight), a
// non-positive value or range on a log axis, no data at all, min >= max, or
// a size under 200 x 150 px. The legend takes its width from the right of
// the plot (at most 40 %; longer labels are cut with "...").
Result<std::string> render_svg(const Plot& plot);

}  // namespace llmplan::reports

#endif  // LLMPLAN_REPORTS_SVG_PLOT_H_

// A small, dependency-free SVG heatmap writer: a rows x columns grid of
// cells, each filled on a sequential, colour-blind-safe scale (viridis:
// dark purple for the lowest value, yellow for the highest; linear or
// logarithmic) with its label printed inside (dark text on light cells,
// light text on dark ones), grey cells for missing values, row and column
// labels, axis titles, a title and a colour-scale legend with ticks right of
// the grid. Used by the frontier report (largest model, loss, cost per loss
// point over GPU counts x deadlines); the conventions (fonts, number labels,
// escaping, deterministic ids) are those of reports/svg_plot.h.
//
// Everything is a pure function of the Heatmap value: the same Heatmap
// always gives byte-identical SVG text, on any thread.
#ifndef LLMPLAN_REPORTS_SVG_HEATMAP_H_
#define LLMPLAN_REPORTS_SVG_HEATMAP_H_

#include <string>
#include <vector>

namespace llmplan::reports {

struct Heatmap {
  std::string title;
  std::string column_title;  // under the grid, e.g. "deadline (days)"
  std::string row_title;     // left of the grid, rotated, e.g. "GPUs"
  std::vector<std::string> row_labels;     // top to bottom
  std::vector<std::string> column_labels;  // left to right
  // values[row][column]. NaN (or any non-finite value, or a non-positive one
  // on a log scale, or an entry past the end of a short row) is missing: a
  // grey cell. Rows and columns beyond the label lists still get drawn (with
  // empty labels); the grid is max(labels, values) in each direction.
  std::vector<std::vector<double>> values;
  // Optional text per cell, same indexing as `values`; an empty or absent
  // entry gets the default: a number label ("%.3g" style, "1.5e9" -> "1.5e9")
  // for a present value, `missing_label` for a missing one.
  std::vector<std::vector<std::string>> cell_labels;
  std::string missing_label = "none";
  bool log_scale = false;
  // Swaps the ends of the scale (yellow for the lowest value), e.g. so that
  // "better" is always bright.
  bool reverse = false;
  std::string legend_title;  // above the colour bar, e.g. "parameters"
  // Optional text of the legend's tick labels: when set, it is called with
  // each tick value (e.g. count_human for "70B"); otherwise number labels.
  std::string (*tick_label)(double) = nullptr;
  int cell_width_px = 96;
  int cell_height_px = 40;
};

// Renders `map` as a standalone <svg> element (no XML prolog). Never fails:
// an empty grid gives a small figure saying "no data"; a grid with no
// present value gives grey cells and no colour bar; labels are XML-escaped
// and cut with "..." to fit their cell. Cell sizes are clamped to 16..400 px.
std::string render_heatmap_svg(const Heatmap& map);

// The fill colour of position t in [0, 1] on the viridis scale, "#rrggbb"
// (t is clamped; NaN gives the lowest colour). Exposed for tests.
std::string viridis_color(double t);

}  // namespace llmplan::reports

#endif  // LLMPLAN_REPORTS_SVG_HEATMAP_H_

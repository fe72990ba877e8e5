// Internal to the frontier report (reports/frontier_*.cc): the study's grid
// with a lookup of cells by coordinates, the figures' file names, and the
// number and text formatting the CSV, Markdown and SVG writers share. Not a
// public interface: everything here may change with the report.
#ifndef LLMPLAN_REPORTS_FRONTIER_INTERNAL_H_
#define LLMPLAN_REPORTS_FRONTIER_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "reports/frontier_report.h"

namespace llmplan::reports::frontier_internal {

inline constexpr size_t kNone = static_cast<size_t>(-1);

// The bits of a double, -0 folded into 0 and every NaN into one: a total
// order for map keys (NaN breaks operator<).
uint64_t bits(double v);

// The study's axes (the table's lists, plus any value that only a cell has,
// in order of first appearance; doubles compared by bits, so NaN is one
// value) and a lookup of cells by coordinates (the first cell wins when two
// share them). Holds a reference to the table: build it, use it, drop it,
// within one call. O(cells log cells) to build.
class Grid {
 public:
  explicit Grid(const FrontierTable& t);

  // The index in t.cells of the cell at these coordinates, or kNone.
  size_t find(const std::string& h, int g, double d, double b) const;
  // The cell at these axis positions, or nullptr.
  const FrontierCell* at(size_t h, size_t g, size_t d, size_t b) const;
  // The GPU name and price of hardware entry h ("" and 0 when not listed).
  std::string gpu_name(size_t h) const;
  double price(size_t h) const;
  // The index of hardware `name` in `hardware` (every cell's is there).
  size_t hardware_index(const std::string& name) const;
  // The deadline just shorter than `d` among the study's deadlines (NaN: none).
  double previous_day(double d) const;

  std::vector<std::string> hardware;
  std::vector<int> gpus;
  std::vector<double> days, budgets;  // budgets: {0} when none is listed

 private:
  struct Key {
    std::string hardware;
    int gpus;
    uint64_t days, budget;
    bool operator<(const Key& o) const {
      return std::tie(hardware, gpus, days, budget) <
             std::tie(o.hardware, o.gpus, o.days, o.budget);
    }
  };
  const FrontierTable& t_;
  std::map<Key, size_t> index_;
  std::map<std::string, size_t> hardware_index_;
  std::vector<double> sorted_days_;  // the finite deadlines, ascending
};

// cost_per_loss_point() with the grid built once.
double cost_per_loss_point_in(const Grid& grid, const FrontierTable& t, size_t cell);

// A number for CSV: plain, full precision (shortest round-trip), empty when
// not finite.
std::string num(double x);
std::string join(const std::vector<std::string>& parts, const char* sep);
// Text safe inside a Markdown table cell or heading: no pipes, no newlines.
std::string md_escape(const std::string& s);
// Inline code, whatever backticks `s` holds.
std::string md_code(const std::string& s);
// "70.2B", "350M", "1T" (three significant digits): heatmap labels.
std::string short_count(double n);
// count_human(), or "n/a" when not finite.
std::string safe_count(double n);
// Fixed decimals, or "n/a" when not finite.
std::string safe_fixed(double v, int decimals);
// Deadlines as written on the command line: "30", "7.5"; "n/a" when not finite.
std::string days_text(double d);
// "$5.00M", or "no budget" for 0 (or anything not a positive number).
std::string budget_text(double b);
// One line on why a cell has no answer ("memory" -> "no plan fits in GPU memory").
std::string why_text(const std::string& why);

// One figure of the report: a heatmap (hardware h, budget b, metric) or the
// params vs GPU-days plot (h == kNone).
struct Figure {
  std::string name;
  size_t h = kNone, b = 0;
  FrontierMetric metric = FrontierMetric::kParams;
};
// Every figure, in the order of frontier_svg_files(), with unique, safe names.
std::vector<Figure> figures(const Grid& grid);
// "Largest model (parameters): dgx-h100" (", budget $5.00M" when several).
std::string figure_title(const Grid& grid, const Figure& f);

}  // namespace llmplan::reports::frontier_internal

#endif  // LLMPLAN_REPORTS_FRONTIER_INTERNAL_H_

// Internal to the frontier report (reports/frontier_*.cc): the study's grid
// with a lookup of cells by coordinates, the figures' file names, and the
// number and text formatting the CSV, Markdown and SVG writers share. Not a
// public interface: everything here may change with the report.
#ifndef LLMPLAN_REPORTS_FRONTIER_INTERNAL_H_
#define LLMPLAN_REPORTS_FRONTIER_INTERNAL_H_

#include <algorithm>
#include <cmath>
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
// in order of first appearance) and a lookup of cells by coordinates.
class Grid {
 public:
  explicit Grid(const FrontierTable& t) : t_(t) {
    for (const std::string& h : t.hardware) add(hardware, h);
    for (int g : t.gpus) add(gpus, g);
    for (double d : t.days) add_double(days, d);
    for (double b : t.budgets_usd) add_double(budgets, b);
    for (size_t i = 0; i < t.cells.size(); ++i) {
      const FrontierCell& c = t.cells[i];
      add(hardware, c.hardware);
      add(gpus, c.gpus);
      add_double(days, c.days);
      add_double(budgets, c.budget_usd);
      index_.emplace(Key{c.hardware, c.gpus, bits(c.days), bits(c.budget_usd)}, i);
    }
    if (budgets.empty()) budgets.push_back(0);
  }

  // The index in t.cells of the cell at these coordinates, or kNone.
  size_t find(const std::string& h, int g, double d, double b) const {
    auto it = index_.find(Key{h, g, bits(d), bits(b)});
    return it == index_.end() ? kNone : it->second;
  }
  const FrontierCell* at(size_t h, size_t g, size_t d, size_t b) const {
    const size_t i = find(hardware[h], gpus[g], days[d], budgets[b]);
    return i == kNone ? nullptr : &t_.cells[i];
  }
  // The GPU name and price of hardware entry h ("" and 0 when not listed).
  std::string gpu_name(size_t h) const {
    if (h < t_.gpu_names.size()) return t_.gpu_names[h];
    for (const FrontierCell& c : t_.cells) {
      if (c.hardware == hardware[h] && !c.gpu.empty()) return c.gpu;
    }
    return "";
  }
  double price(size_t h) const {
    return h < t_.gpu_price_usd_per_hour.size() ? t_.gpu_price_usd_per_hour[h] : 0;
  }

  // The index of hardware `name` in `hardware` (every cell's is there).
  size_t hardware_index(const std::string& name) const {
    return static_cast<size_t>(std::find(hardware.begin(), hardware.end(), name) -
                               hardware.begin());
  }

  // The deadline just shorter than `d` among the study's deadlines (NaN: none).
  double previous_day(double d) const {
    double best = NAN;
    for (double x : days) {
      if (x < d && (std::isnan(best) || x > best)) best = x;
    }
    return best;
  }

  std::vector<std::string> hardware;
  std::vector<int> gpus;
  std::vector<double> days, budgets;

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
  template <typename T>
  static void add(std::vector<T>& list, const T& v) {
    if (std::find(list.begin(), list.end(), v) == list.end()) list.push_back(v);
  }
  static void add_double(std::vector<double>& list, double v) {
    for (double x : list) {
      if (bits(x) == bits(v)) return;
    }
    list.push_back(v);
  }
  const FrontierTable& t_;
  std::map<Key, size_t> index_;
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

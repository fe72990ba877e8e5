#include "reports/frontier_internal.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <set>

#include "reports/format.h"

namespace llmplan::reports::frontier_internal {
namespace {

// Lowercase [a-z0-9-_.] only, no leading dot, never empty.
std::string slug(const std::string& s, const std::string& fallback) {
  std::string out;
  for (char ch : s) {
    const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
    if (ok) {
      out += c;
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && (out.back() == '-' || out.back() == '.')) out.pop_back();
  while (!out.empty() && (out.front() == '.' || out.front() == '-')) out.erase(0, 1);
  if (out.size() > 60) out.resize(60);
  return out.empty() ? fallback : out;
}

const char* kMetricSlugs[] = {"params", "loss", "cost-per-loss-point"};
const FrontierMetric kMetrics[] = {FrontierMetric::kParams, FrontierMetric::kLoss,
                                   FrontierMetric::kCostPerLossPoint};

}  // namespace

// The bits of a double, -0 folded into 0 and every NaN into one: a total
// order for map keys (NaN breaks operator<).
uint64_t bits(double v) {
  if (v == 0) v = 0;
  if (std::isnan(v)) return 0x7ff8000000000000ULL;
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

Grid::Grid(const FrontierTable& t) : t_(t) {
  std::set<std::string> seen_hardware;
  std::set<int> seen_gpus;
  std::set<uint64_t> seen_days, seen_budgets;
  auto add_hardware = [&](const std::string& h) {
    if (seen_hardware.insert(h).second) {
      hardware_index_.emplace(h, hardware.size());
      hardware.push_back(h);
    }
  };
  auto add_gpus = [&](int g) {
    if (seen_gpus.insert(g).second) gpus.push_back(g);
  };
  auto add_double = [](std::set<uint64_t>& seen, std::vector<double>& list, double v) {
    if (seen.insert(bits(v)).second) list.push_back(v);
  };
  for (const std::string& h : t.hardware) add_hardware(h);
  for (int g : t.gpus) add_gpus(g);
  for (double d : t.days) add_double(seen_days, days, d);
  for (double b : t.budgets_usd) add_double(seen_budgets, budgets, b);
  for (size_t i = 0; i < t.cells.size(); ++i) {
    const FrontierCell& c = t.cells[i];
    add_hardware(c.hardware);
    add_gpus(c.gpus);
    add_double(seen_days, days, c.days);
    add_double(seen_budgets, budgets, c.budget_usd);
    index_.emplace(Key{c.hardware, c.gpus, bits(c.days), bits(c.budget_usd)}, i);
  }
  if (budgets.empty()) budgets.push_back(0);
  for (double d : days) {
    if (std::isfinite(d)) sorted_days_.push_back(d);
  }
  std::sort(sorted_days_.begin(), sorted_days_.end());
}

size_t Grid::find(const std::string& h, int g, double d, double b) const {
  auto it = index_.find(Key{h, g, bits(d), bits(b)});
  return it == index_.end() ? kNone : it->second;
}

const FrontierCell* Grid::at(size_t h, size_t g, size_t d, size_t b) const {
  const size_t i = find(hardware[h], gpus[g], days[d], budgets[b]);
  return i == kNone ? nullptr : &t_.cells[i];
}

std::string Grid::gpu_name(size_t h) const {
  if (h < t_.gpu_names.size()) return t_.gpu_names[h];
  for (const FrontierCell& c : t_.cells) {
    if (c.hardware == hardware[h] && !c.gpu.empty()) return c.gpu;
  }
  return "";
}

double Grid::price(size_t h) const {
  return h < t_.gpu_price_usd_per_hour.size() ? t_.gpu_price_usd_per_hour[h] : 0;
}

size_t Grid::hardware_index(const std::string& name) const {
  auto it = hardware_index_.find(name);
  return it == hardware_index_.end() ? kNone : it->second;
}

double Grid::previous_day(double d) const {
  if (std::isnan(d)) return NAN;
  auto it = std::lower_bound(sorted_days_.begin(), sorted_days_.end(), d);
  return it == sorted_days_.begin() ? NAN : *(it - 1);
}

double cost_per_loss_point_in(const Grid& grid, const FrontierTable& t, size_t cell) {
  if (cell >= t.cells.size()) return NAN;
  const FrontierCell& c = t.cells[cell];
  if (!c.found) return NAN;
  const double prev_day = grid.previous_day(c.days);
  if (std::isnan(prev_day)) return NAN;
  const size_t p = grid.find(c.hardware, c.gpus, prev_day, c.budget_usd);
  if (p == kNone || !t.cells[p].found) return NAN;
  const FrontierCell& prev = t.cells[p];
  const double gain = prev.loss - c.loss;
  if (!std::isfinite(gain) || !(gain > 0)) return NAN;
  if (!std::isfinite(c.cost_usd) || !std::isfinite(prev.cost_usd) || !(c.cost_usd > 0) ||
      !(prev.cost_usd > 0)) {
    return NAN;
  }
  const double v = (c.cost_usd - prev.cost_usd) / (gain / 0.01);
  return std::isfinite(v) ? v : NAN;
}

// A number for CSV: plain, full precision (shortest round-trip), empty when
// not finite.
std::string num(double x) {
  if (!std::isfinite(x)) return "";
  return fmt::format("{}", x);
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

// Text safe inside a Markdown table cell or heading: no pipes, no newlines.
std::string md_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

// Inline code, whatever backticks `s` holds.
std::string md_code(const std::string& s) {
  const std::string text = md_escape(s);
  size_t run = 0, longest = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(longest + 1, '`');
  return longest ? fence + " " + text + " " + fence : fence + text + fence;
}

// "70.2B", "350M", "1T" (three significant digits): heatmap labels.
std::string short_count(double n) {
  if (!std::isfinite(n)) return "n/a";
  const double a = std::fabs(n);
  if (a >= 1e12) return fmt::format("{:.3g}T", n / 1e12);
  if (a >= 1e9) return fmt::format("{:.3g}B", n / 1e9);
  if (a >= 1e6) return fmt::format("{:.3g}M", n / 1e6);
  if (a >= 1e3) return fmt::format("{:.3g}K", n / 1e3);
  return fmt::format("{:.3g}", n);
}

std::string safe_count(double n) { return std::isfinite(n) ? count_human(n) : "n/a"; }
std::string safe_fixed(double v, int decimals) {
  return std::isfinite(v) ? fmt::format("{:.{}f}", v, decimals) : "n/a";
}
// Deadlines and GPU counts as written on the command line: "30", "7.5".
std::string days_text(double d) { return std::isfinite(d) ? fmt::format("{:g}", d) : "n/a"; }

std::string budget_text(double b) { return std::isfinite(b) && b > 0 ? usd_human(b) : "no budget"; }

std::string why_text(const std::string& why) {
  if (why == "no-layout") return "the plan space has no parallel layout for this GPU count";
  if (why == "memory") return "no plan fits in GPU memory";
  if (why == "deadline") return "no model finishes within the deadline";
  if (why == "budget") return "every plan that finishes in time is over the budget";
  if (why.empty()) return "no answer (no reason given)";
  return why;
}

std::vector<Figure> figures(const Grid& grid) {
  std::vector<Figure> out;
  std::set<std::string> used;
  auto unique = [&](const std::string& stem) {
    std::string name = stem + ".svg";
    for (int k = 2; used.count(name); ++k) name = fmt::format("{}-{}.svg", stem, k);
    used.insert(name);
    return name;
  };
  const bool several = grid.budgets.size() > 1;
  for (size_t h = 0; h < grid.hardware.size(); ++h) {
    const std::string hw = slug(grid.hardware[h], fmt::format("hardware-{}", h + 1));
    for (size_t b = 0; b < grid.budgets.size(); ++b) {
      const double usd = grid.budgets[b];
      const std::string suffix = !several ? ""
                                 : std::isfinite(usd) && usd > 0 && usd < 1e18
                                     ? fmt::format("-budget-{:.0f}", usd)
                                     : std::string("-budget-none");
      for (int m = 0; m < 3; ++m) {
        out.push_back({unique(fmt::format("frontier-{}-{}{}", kMetricSlugs[m], hw, suffix)), h, b,
                       kMetrics[m]});
      }
    }
  }
  out.push_back({unique("frontier-params-vs-gpu-days"), kNone, 0, FrontierMetric::kParams});
  return out;
}

std::string figure_title(const Grid& grid, const Figure& f) {
  const char* what = f.metric == FrontierMetric::kParams ? "Largest model (parameters)"
                     : f.metric == FrontierMetric::kLoss ? "Predicted loss"
                                                         : "Cost per loss point ($ per 0.01 loss)";
  std::string title = fmt::format("{}: {}", what, grid.hardware[f.h]);
  if (grid.budgets.size() > 1) title += ", budget " + budget_text(grid.budgets[f.b]);
  return title;
}

}  // namespace llmplan::reports::frontier_internal

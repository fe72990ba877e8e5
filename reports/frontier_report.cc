#include "reports/frontier_report.h"

#include <boost/json.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <tuple>

#include "reports/format.h"
#include "reports/svg_heatmap.h"
#include "reports/svg_plot.h"
#include "reports/table.h"
#include "simulator/strict_json.h"

namespace llmplan::reports {
namespace {

constexpr size_t kNone = static_cast<size_t>(-1);
// Cells listed by name in a note before "and N more".
constexpr size_t kListedCells = 12;
constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr size_t kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);

// The bits of a double, -0 folded into 0 and every NaN into one: a total
// order for map keys (NaN breaks operator<).
uint64_t bits(double v) {
  if (v == 0) v = 0;
  if (std::isnan(v)) return 0x7ff8000000000000ULL;
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

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

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789-_./=:,+%@") == std::string::npos) {
    return s;
  }
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
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

std::string why_text(const std::string& why) {
  if (why == "no-layout") return "the plan space has no parallel layout for this GPU count";
  if (why == "memory") return "no plan fits in GPU memory";
  if (why == "deadline") return "no model finishes within the deadline";
  if (why == "budget") return "every plan that finishes in time is over the budget";
  if (why.empty()) return "no answer (no reason given)";
  return why;
}

std::string caveat_text(const std::string& code) {
  if (code == "uncalibrated-gpu") {
    return "the GPU's cost-model constants were not fitted to measurements of it: the error is "
           "unknown";
  }
  if (code == "mfu-above-validated") {
    return "the predicted MFU is above the highest MFU of the runs the constants were fitted on";
  }
  if (code == "flash-attention-unfitted") {
    return "flash-attention efficiency is an assumed constant, not a fitted one";
  }
  if (code == "efficiency-above-ceiling") {
    return "a cost-model efficiency is above the GPU's physical ceiling";
  }
  if (code == "moe-uncalibrated") {
    return "mixture-of-experts layers are costed with dense-run constants (large error on "
           "published MoE runs)";
  }
  return "see the simulator's caveats";
}

std::string budget_text(double b) {
  return std::isfinite(b) && b > 0 ? usd_human(b) : "no budget";
}

// "dgx-h100, 1024 GPUs, 30 d" (and the budget when there are several).
std::string cell_name(const FrontierCell& c, bool with_budget) {
  std::string s = fmt::format("{}, {} GPUs, {} d", c.hardware, c.gpus, days_text(c.days));
  if (with_budget) s += ", " + budget_text(c.budget_usd);
  return s;
}

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

// One figure of the report: a heatmap (hardware h, budget b, metric) or the
// params vs GPU-days plot (h = kNone).
struct Figure {
  std::string name;
  size_t h = kNone, b = 0;
  FrontierMetric metric = FrontierMetric::kParams;
};

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
      const std::string suffix =
          !several ? ""
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

std::string heatmap_svg(const FrontierTable& t, const Grid& grid, const Figure& f) {
  Heatmap map;
  map.title = figure_title(grid, f);
  map.row_title = "GPUs available";
  map.column_title = "deadline (days)";
  for (int g : grid.gpus) map.row_labels.push_back(std::to_string(g));
  for (double d : grid.days) map.column_labels.push_back(days_text(d) + " d");
  bool all_positive = true;
  for (size_t g = 0; g < grid.gpus.size(); ++g) {
    std::vector<double> row;
    std::vector<std::string> labels;
    for (size_t d = 0; d < grid.days.size(); ++d) {
      const FrontierCell* c = grid.at(f.h, g, d, f.b);
      double v = NAN;
      std::string label;
      if (c == nullptr || !c->found) {
        label = "none";
      } else if (f.metric == FrontierMetric::kParams) {
        v = c->params;
        label = short_count(v);
      } else if (f.metric == FrontierMetric::kLoss) {
        v = c->loss;
        label = safe_fixed(v, 3);
      } else {
        v = cost_per_loss_point_in(grid, t, static_cast<size_t>(c - t.cells.data()));
        label = std::isnan(v) ? "n/a" : usd_human(v);
      }
      if (std::isfinite(v) && v <= 0) all_positive = false;
      row.push_back(v);
      labels.push_back(label);
    }
    map.values.push_back(std::move(row));
    map.cell_labels.push_back(std::move(labels));
  }
  switch (f.metric) {
    case FrontierMetric::kParams:
      map.log_scale = true;
      map.legend_title = "parameters";
      map.tick_label = short_count;
      break;
    case FrontierMetric::kLoss:
      map.reverse = true;  // lower loss: brighter
      map.legend_title = "predicted loss";
      break;
    case FrontierMetric::kCostPerLossPoint:
      map.log_scale = all_positive;
      map.reverse = true;  // cheaper: brighter
      map.legend_title = "$ per 0.01 loss";
      map.tick_label = usd_human;
      break;
  }
  return render_heatmap_svg(map);
}

std::string params_vs_gpu_days_svg(const FrontierTable& t, const Grid& grid) {
  Plot plot;
  plot.title = "Largest model vs GPU-days used";
  plot.x = {"GPU-days (GPUs used x training days)", true};
  plot.y = {"parameters", true};
  for (size_t h = 0; h < grid.hardware.size(); ++h) {
    std::vector<std::pair<double, double>> points;
    for (const FrontierCell& c : t.cells) {
      if (c.hardware != grid.hardware[h] || !c.found) continue;
      if (!(c.gpu_days > 0) || !std::isfinite(c.gpu_days) || !(c.params > 0) ||
          !std::isfinite(c.params)) {
        continue;
      }
      points.emplace_back(c.gpu_days, c.params);
    }
    if (points.empty()) continue;
    std::sort(points.begin(), points.end());
    const std::string color = kPalette[h % kPaletteSize];
    PlotSeries dots{grid.hardware[h], SeriesKind::kScatter, {}, {}, color, false};
    PlotSeries envelope{"", SeriesKind::kLine, {}, {}, color, false};
    double best = 0;
    for (const auto& [x, y] : points) {
      dots.x.push_back(x);
      dots.y.push_back(y);
      if (y > best) {  // the largest model up to this many GPU-days
        best = y;
        envelope.x.push_back(x);
        envelope.y.push_back(y);
      }
    }
    plot.series.push_back(std::move(dots));
    if (envelope.x.size() > 1) plot.series.push_back(std::move(envelope));
  }
  if (!plot.series.empty()) {
    Result<std::string> svg = render_svg(plot);
    if (svg.ok()) return *svg;
  }
  Heatmap empty;
  empty.title = plot.title + ": no cell has an answer";
  return render_heatmap_svg(empty);
}

// The Markdown text of one cell of the answers table.
std::string answer_text(const FrontierCell* c) {
  if (c == nullptr) return "— (not computed)";
  if (!c->found) return "— " + md_escape(c->why.empty() ? "no answer" : c->why);
  std::string params = safe_count(c->params);
  if (c->active_params > 0 && std::isfinite(c->active_params) &&
      c->active_params < 0.999 * c->params) {
    params += " (" + safe_count(c->active_params) + " active)";
  }
  std::string s = fmt::format("{} · {} tok · loss {} · {} d", params, safe_count(c->tokens),
                              safe_fixed(c->loss, 2), safe_fixed(c->train_days, 1));
  if (std::isfinite(c->cost_usd) && c->cost_usd > 0) s += " · " + usd_human(c->cost_usd);
  return s;
}

// "a, b, c and 4 more".
std::string list_cells(const std::vector<std::string>& names) {
  std::vector<std::string> shown(names.begin(),
                                 names.begin() + static_cast<std::ptrdiff_t>(
                                                     std::min(names.size(), kListedCells)));
  std::string s = join(shown, "; ");
  if (names.size() > shown.size()) s += fmt::format("; and {} more", names.size() - shown.size());
  return s;
}

}  // namespace

double cost_per_loss_point(const FrontierTable& t, size_t cell) {
  if (cell >= t.cells.size()) return NAN;
  return cost_per_loss_point_in(Grid(t), t, cell);
}

std::string frontier_csv(const FrontierTable& t) {
  const Grid grid(t);
  Table table({"hardware", "gpu", "gpus", "days", "budget_usd", "found", "why", "model", "params",
               "active_params", "tokens", "loss", "plan", "gpus_used", "train_days", "mfu",
               "cost_usd", "gpu_days", "caveats", "architecture", "cost_per_loss_point_usd"});
  for (size_t i = 0; i < t.cells.size(); ++i) {
    const FrontierCell& c = t.cells[i];
    std::vector<std::string> row = {c.hardware, c.gpu, std::to_string(c.gpus), num(c.days),
                                    num(c.budget_usd), c.found ? "1" : "0", c.why};
    if (c.found) {
      row.insert(row.end(),
                 {c.model, num(c.params), num(c.active_params), num(c.tokens), num(c.loss), c.plan,
                  std::to_string(c.gpus_used), num(c.train_days), num(c.mfu), num(c.cost_usd),
                  num(c.gpu_days), join(c.caveats, ";"), c.architecture,
                  num(cost_per_loss_point_in(grid, t, i))});
    } else {
      row.insert(row.end(), 14, "");
    }
    for (std::string& cell : row) {  // one record per line
      std::replace(cell.begin(), cell.end(), '\n', ' ');
      std::replace(cell.begin(), cell.end(), '\r', ' ');
    }
    table.add_row(std::move(row));
  }
  return table.csv();
}

std::string frontier_json(const FrontierTable& t) {
  const Grid grid(t);
  namespace json = boost::json;
  auto strings = [](const std::vector<std::string>& v) {
    json::array a;
    for (const std::string& s : v) a.emplace_back(s);
    return a;
  };
  auto numbers = [](const auto& v) {
    json::array a;
    for (auto x : v) a.emplace_back(x);
    return a;
  };
  json::object o;
  o["hardware"] = strings(t.hardware);
  o["gpu_names"] = strings(t.gpu_names);
  o["gpu_price_usd_per_hour"] = numbers(t.gpu_price_usd_per_hour);
  o["gpus"] = numbers(t.gpus);
  o["days"] = numbers(t.days);
  o["budgets_usd"] = numbers(t.budgets_usd);
  o["objective"] = t.objective;
  o["law"] = t.law;
  o["family"] = t.family;
  o["simulations"] = static_cast<int64_t>(t.simulations);
  o["plan_lookups"] = static_cast<int64_t>(t.plan_lookups);
  o["command_line"] = strings(t.command_line);
  json::array cells;
  for (size_t i = 0; i < t.cells.size(); ++i) {
    const FrontierCell& c = t.cells[i];
    json::object j;
    j["hardware"] = c.hardware;
    j["gpu"] = c.gpu;
    j["gpus"] = c.gpus;
    j["days"] = c.days;
    j["budget_usd"] = c.budget_usd;
    j["found"] = c.found;
    j["why"] = c.why;
    j["model"] = c.model;
    j["architecture"] = c.architecture;
    j["params"] = c.params;
    j["active_params"] = c.active_params;
    j["tokens"] = c.tokens;
    j["loss"] = c.loss;
    j["plan"] = c.plan;
    j["gpus_used"] = c.gpus_used;
    j["train_days"] = c.train_days;
    j["mfu"] = c.mfu;
    j["cost_usd"] = c.cost_usd;
    j["gpu_days"] = c.gpu_days;
    j["caveats"] = strings(c.caveats);
    const double cpl = cost_per_loss_point_in(grid, t, i);
    if (std::isfinite(cpl)) {
      j["cost_per_loss_point_usd"] = cpl;
    } else {
      j["cost_per_loss_point_usd"] = nullptr;
    }
    cells.push_back(std::move(j));
  }
  o["cells"] = std::move(cells);
  // Non-finite numbers (which JSON cannot hold) are written as null.
  return llmplan::json::pretty(o);
}

std::vector<std::string> frontier_svg_names(const FrontierTable& t) {
  std::vector<std::string> names;
  for (const Figure& f : figures(Grid(t))) names.push_back(f.name);
  return names;
}

std::vector<SvgFile> frontier_svg_files(const FrontierTable& t) {
  const Grid grid(t);
  std::vector<SvgFile> files;
  for (const Figure& f : figures(grid)) {
    files.push_back({f.name, f.h == kNone ? params_vs_gpu_days_svg(t, grid)
                                          : heatmap_svg(t, grid, f)});
  }
  return files;
}

std::string frontier_markdown(const FrontierTable& t) {
  const Grid grid(t);
  const bool several_budgets = grid.budgets.size() > 1;
  const bool largest = t.objective != "loss";
  std::string md = largest
                       ? "# llmplan frontier: the largest model per cluster size and deadline\n\n"
                       : "# llmplan frontier: the lowest loss per cluster size and deadline\n\n";
  if (!t.command_line.empty()) {
    std::vector<std::string> args;
    for (const std::string& a : t.command_line) args.push_back(shell_quote(a));
    md += "Command: " + md_code(join(args, " ")) + "\n\n";
  }
  md += fmt::format("- Objective: {} ({}); loss law: {}; model family: {}\n",
                    md_escape(t.objective.empty() ? "largest" : t.objective),
                    largest ? "the largest model that trains within the deadline"
                            : "the lowest predicted loss within the deadline",
                    md_escape(t.law.empty() ? "n/a" : t.law),
                    md_escape(t.family.empty() ? "n/a" : t.family));
  for (size_t h = 0; h < grid.hardware.size(); ++h) {
    const std::string gpu = grid.gpu_name(h);
    const double price = grid.price(h);
    md += fmt::format("- Hardware: {}{}{}\n", md_escape(grid.hardware[h]),
                      gpu.empty() ? "" : " (" + md_escape(gpu) + ")",
                      std::isfinite(price) && price > 0
                          ? ", " + usd_human(price) + " per GPU-hour"
                          : ", no price: costs not shown");
  }
  {
    std::vector<std::string> g, d, b;
    for (int x : grid.gpus) g.push_back(std::to_string(x));
    for (double x : grid.days) d.push_back(days_text(x));
    for (double x : grid.budgets) b.push_back(budget_text(x));
    md += fmt::format("- GPU counts: {}; deadlines (days): {}; budgets: {}\n", join(g, ", "),
                      join(d, ", "), join(b, ", "));
  }
  const std::string factor =
      t.simulations > 0
          ? fmt::format("{:.1f}", static_cast<double>(t.plan_lookups) / t.simulations)
          : "n/a";
  md += fmt::format(
      "- Reuse: {} simulations served {} plan evaluations across {} cells (reuse factor {}): "
      "deadline and budget do not change a simulation, so each (hardware, model, plan) was "
      "simulated once and shared by every cell that could use it\n\n",
      t.simulations, t.plan_lookups, t.cells.size(), factor);

  // Answers.
  md += "## Answers\n\n";
  md += "Rows: GPUs available; columns: deadline in days. Each cell reads: model size (total "
        "parameters) · training tokens · predicted loss · simulated training days · cost "
        "(GPUs used x hours x price per GPU-hour). The planner may use fewer GPUs than a row "
        "offers when that trains the same model in time more cheaply (see \"Plans per cell\"). "
        "\"—\" marks a cell without an answer, with the reason.\n\n";
  if (t.cells.empty()) md += "The study has no cells.\n\n";
  for (size_t h = 0; h < grid.hardware.size(); ++h) {
    for (size_t b = 0; b < grid.budgets.size(); ++b) {
      md += "### " + md_escape(grid.hardware[h]);
      if (several_budgets) md += ", budget " + budget_text(grid.budgets[b]);
      md += "\n\n";
      std::vector<std::string> header = {"GPUs"};
      for (double d : grid.days) header.push_back(days_text(d) + " d");
      Table table(header);
      for (size_t g = 0; g < grid.gpus.size(); ++g) {
        std::vector<std::string> row = {std::to_string(grid.gpus[g])};
        for (size_t d = 0; d < grid.days.size(); ++d) row.push_back(answer_text(grid.at(h, g, d, b)));
        table.add_row(std::move(row));
      }
      md += table.markdown() + "\n";
    }
  }

  // Plans.
  md += "## Plans per cell\n\n";
  {
    std::vector<std::string> header = {"hardware", "GPUs", "days"};
    if (several_budgets) header.push_back("budget");
    for (const char* h : {"model", "plan", "GPUs used", "MFU", "GPU-days", "$ per 0.01 loss"}) {
      header.push_back(h);
    }
    Table table(header);
    for (size_t i = 0; i < t.cells.size(); ++i) {
      const FrontierCell& c = t.cells[i];
      std::vector<std::string> row = {md_escape(c.hardware), std::to_string(c.gpus),
                                      days_text(c.days)};
      if (several_budgets) row.push_back(budget_text(c.budget_usd));
      if (c.found) {
        const double cpl = cost_per_loss_point_in(grid, t, i);
        row.insert(row.end(), {md_escape(c.model), md_escape(c.plan), std::to_string(c.gpus_used),
                               std::isfinite(c.mfu) ? percent(c.mfu) : "n/a",
                               safe_fixed(c.gpu_days, 0), std::isnan(cpl) ? "n/a" : usd_human(cpl)});
      } else {
        row.insert(row.end(), {"—", md_escape(c.why.empty() ? "no answer" : c.why), "", "", "", ""});
      }
      table.add_row(std::move(row));
    }
    md += table.markdown() + "\n";
  }

  // Figures.
  md += "## Figures\n\n";
  md += "Cost per loss point: for a cell with an answer, the extra dollars its deadline costs "
        "over the previous (next shorter) deadline's cell with the same hardware, GPUs and "
        "budget, per 0.01 of predicted loss gained: (cost - cost_prev) / ((loss_prev - loss) / "
        "0.01). \"n/a\" at the shortest deadline, where the loss did not improve, or without a "
        "GPU price. A negative value means the longer deadline is both better and cheaper.\n\n";
  for (const std::string& name : frontier_svg_names(t)) {
    md += fmt::format("![{}]({})\n\n", name.substr(0, name.size() - 4), name);
  }

  // Notes.
  md += "## Notes\n\n";
  std::map<std::string, std::vector<std::string>> caveats, missing;
  for (const FrontierCell& c : t.cells) {
    const std::string name = md_escape(cell_name(c, several_budgets));
    if (c.found) {
      for (const std::string& k : c.caveats) caveats[k].push_back(name);
    } else {
      missing[c.why].push_back(name);
    }
  }
  if (caveats.empty()) {
    md += "- No simulated answer carries a caveat.\n";
  } else {
    for (const auto& [code, names] : caveats) {
      md += fmt::format("- Caveat {} ({}): {} cell{}: {}\n", md_code(code),
                        md_escape(caveat_text(code)), names.size(), names.size() == 1 ? "" : "s",
                        list_cells(names));
    }
  }
  if (missing.empty()) {
    md += t.cells.empty() ? "- No cells.\n" : "- Every cell has an answer.\n";
  } else {
    for (const auto& [why, names] : missing) {
      md += fmt::format("- No answer, {} ({}): {} cell{}: {}\n",
                        md_escape(why.empty() ? "unknown" : why), md_escape(why_text(why)),
                        names.size(), names.size() == 1 ? "" : "s", list_cells(names));
    }
  }
  md += "- Predictions come from the simulator and the loss law; treat a cell as a plan to "
        "validate with a short run on the real cluster, not as a guarantee.\n";
  return md;
}

}  // namespace llmplan::reports

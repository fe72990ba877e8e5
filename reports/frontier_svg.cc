#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "reports/format.h"
#include "reports/frontier_internal.h"
#include "reports/frontier_report.h"
#include "reports/svg_heatmap.h"
#include "reports/svg_plot.h"

namespace llmplan::reports {

using frontier_internal::cost_per_loss_point_in;
using frontier_internal::days_text;
using frontier_internal::figure_title;
using frontier_internal::figures;
using frontier_internal::kNone;
using frontier_internal::safe_fixed;
using frontier_internal::short_count;

namespace {

constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr size_t kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);

std::string heatmap_svg(const FrontierTable& t, const frontier_internal::Grid& grid,
                        const frontier_internal::Figure& f) {
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
      map.note =
          "Extra cost over the next shorter deadline per 0.01 of loss gained; n/a: shortest "
          "deadline, no gain or no price";
      map.tick_label = usd_human;
      break;
  }
  return render_heatmap_svg(map);
}

std::string params_vs_gpu_days_svg(const FrontierTable& t, const frontier_internal::Grid& grid) {
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

}  // namespace

std::vector<std::string> frontier_svg_names(const FrontierTable& t) {
  std::vector<std::string> names;
  for (const frontier_internal::Figure& f : figures(frontier_internal::Grid(t))) {
    names.push_back(f.name);
  }
  return names;
}

std::vector<SvgFile> frontier_svg_files(const FrontierTable& t) {
  const frontier_internal::Grid grid(t);
  std::vector<SvgFile> files;
  for (const frontier_internal::Figure& f : figures(grid)) {
    files.push_back(
        {f.name, f.h == kNone ? params_vs_gpu_days_svg(t, grid) : heatmap_svg(t, grid, f)});
  }
  return files;
}

}  // namespace llmplan::reports

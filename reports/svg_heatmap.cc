#include "reports/svg_heatmap.h"
#include "reports/svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace llmplan::reports {
namespace {

// Viridis (matplotlib), sampled at 0, 0.1, ..., 1.
constexpr uint32_t kViridis[] = {0x440154, 0x482475, 0x414487, 0x355f8d, 0x2a788e, 0x21918c,
                                 0x22a884, 0x44bf70, 0x7ad151, 0xbddf26, 0xfde725};
constexpr int kViridisStops = sizeof(kViridis) / sizeof(kViridis[0]);
constexpr const char* kMissingFill = "#d9d9d9";
constexpr double kCharPx = 6.6;       // of the 12 px sans-serif text
constexpr double kCellCharPx = 6.2;   // of the 11 px cell text
constexpr double kTitleCharPx = 8.5;  // of the 15 px bold title
constexpr double kBarWidth = 16, kMarginTop = 44, kMarginRight = 16;


std::string px(double v) { return fmt::format("{:.2f}", v); }


// Cuts `label` to at most `chars` characters (UTF-8 aware: never splits a
// multi-byte character), ending in "...".
std::string fit_label(const std::string& label, double chars_d) {
  const size_t chars = chars_d < 1 ? 1 : static_cast<size_t>(chars_d);
  size_t count = 0;
  for (unsigned char c : label) count += (c & 0xC0) != 0x80;
  if (count <= chars) return label;
  const size_t keep = chars > 3 ? chars - 3 : 1;
  std::string out;
  size_t kept = 0;
  for (size_t i = 0; i < label.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(label[i]);
    if ((c & 0xC0) != 0x80) {
      if (kept == keep) break;
      ++kept;
    }
    out += label[i];
  }
  return out + "...";
}

// Characters (not bytes) of UTF-8 text.
double chars(const std::string& text) {
  size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return static_cast<double>(n);
}

// "1.5", "0.02", "3e9": short labels for numbers.
std::string number_label(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
  if (v == 0) return "0";
  return svg_short_number(v);
}

// Round tick values within [lo, hi] (data units): the finest 1-2-5 step
// that gives at most six ticks.
std::vector<double> linear_ticks(double lo, double hi) {
  const double span = hi - lo;
  if (!(span > 0) || !std::isfinite(span)) return {lo};
  const double mag = std::pow(10.0, std::floor(std::log10(span / 10)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0}) {
    step = m * mag;
    if (std::floor(hi / step + 1e-9) - std::ceil(lo / step - 1e-9) + 1 <= 6) break;
  }
  std::vector<double> ticks;
  for (double k = std::ceil(lo / step - 1e-9); k * step <= hi + 1e-9 * step && ticks.size() < 12;
       k += 1) {
    ticks.push_back(std::fabs(k) < 1e-12 ? 0 : k * step);
  }
  return ticks;
}

std::vector<double> log_ticks(double lo, double hi) {
  const double llo = std::log10(lo), lhi = std::log10(hi);
  const int first = static_cast<int>(std::ceil(llo - 1e-9));
  const int last = static_cast<int>(std::floor(lhi + 1e-9));
  std::vector<double> ticks;
  if (last - first + 1 >= 2) {  // decades
    const int stride = std::max(1, (last - first + 6) / 6);
    for (int k = first; k <= last; k += stride) ticks.push_back(std::pow(10.0, k));
    return ticks;
  }
  for (int k = static_cast<int>(std::floor(llo)); k <= static_cast<int>(std::ceil(lhi)); ++k) {
    for (double m : {1.0, 2.0, 5.0}) {
      const double v = m * std::pow(10.0, k);
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) ticks.push_back(v);
    }
  }
  return ticks.size() >= 2 ? ticks : linear_ticks(lo, hi);
}

double luminance(uint32_t rgb) {
  auto channel = [](uint32_t c) {
    const double s = c / 255.0;
    return s <= 0.03928 ? s / 12.92 : std::pow((s + 0.055) / 1.055, 2.4);
  };
  return 0.2126 * channel((rgb >> 16) & 0xff) + 0.7152 * channel((rgb >> 8) & 0xff) +
         0.0722 * channel(rgb & 0xff);
}

uint32_t viridis_rgb(double t) {
  if (std::isnan(t)) t = 0;
  t = std::clamp(t, 0.0, 1.0) * (kViridisStops - 1);
  const int i = std::min(static_cast<int>(t), kViridisStops - 2);
  const double f = t - i;
  uint32_t out = 0;
  for (int shift : {16, 8, 0}) {
    const double a = (kViridis[i] >> shift) & 0xff, b = (kViridis[i + 1] >> shift) & 0xff;
    const auto c = static_cast<uint32_t>(std::lround(a + f * (b - a)));
    out |= std::min<uint32_t>(c, 255) << shift;
  }
  return out;
}

std::string hex(uint32_t rgb) { return fmt::format("#{:06x}", rgb); }

}  // namespace

std::string viridis_color(double t) { return hex(viridis_rgb(t)); }

namespace {

// The value of cell (r, c), NaN when missing, not finite or not drawable on
// a log scale.
double heat_value(const Heatmap& map, size_t r, size_t c) {
  if (r >= map.values.size() || c >= map.values[r].size()) return NAN;
  const double v = map.values[r][c];
  if (!std::isfinite(v) || (map.log_scale && v <= 0)) return NAN;
  return v;
}

// A value on the colour scale's axis (log10 on a log scale).
double heat_transform(const Heatmap& map, double v) { return map.log_scale ? std::log10(v) : v; }

// The image with no cells: the title and "no data".
std::string empty_heatmap_svg(const Heatmap& map, const std::string& header_fmt) {
    const double w = std::clamp(std::ceil(kTitleCharPx * chars(map.title) + 40), 360.0, 1200.0);
    std::string svg = fmt::format(fmt::runtime(header_fmt), w, 120);
    svg += fmt::format(
        "<text x=\"{}\" y=\"30\" text-anchor=\"middle\" font-size=\"15\" "
        "font-weight=\"bold\">{}</text>\n",
        px(w / 2), svg_escape(fit_label(map.title, (w - 20) / kTitleCharPx)));
    svg += fmt::format(
        "<text x=\"{}\" y=\"72\" text-anchor=\"middle\" fill=\"#555\">no data</text>\n", px(w / 2));
    return svg + "</svg>\n";
}

// The heatmap's layout: grid size, value range (tlo, thi on the colour
// scale's axis; any: some cell has a value), cell and frame geometry (px),
// the legend's ticks and labels, and the image size.
struct HeatLayout {
  size_t rows = 0, cols = 0;
  double lo = 0, hi = 0, tlo = 0, thi = 1;
  bool any = false;
  double cw = 0, ch = 0, row_label_w = 0, left = 0, top = 0, grid_w = 0, grid_h = 0;
  double right = 0, bottom = 0, legend_x = 0, legend_w = 0, width = 0, note_y = 0;
  double height = 0, bar_h = 0;
  std::vector<double> ticks;
  std::vector<std::string> tick_labels;
};

// Position of v on the colour scale, 0..1 (0.5 when every value is the same).
double heat_position(const Heatmap& map, const HeatLayout& L, double v) {
  const double span = L.thi - L.tlo;
  double t = span > 0 && std::isfinite(span) ? (heat_transform(map, v) - L.tlo) / span : 0.5;
  if (!std::isfinite(t)) t = 0.5;
  return map.reverse ? 1 - t : t;
}

HeatLayout heat_layout(const Heatmap& map, size_t rows, size_t cols) {
  HeatLayout L;
  L.rows = rows;
  L.cols = cols;
  double& lo = L.lo;
  double& hi = L.hi;
  lo = INFINITY;
  hi = -INFINITY;
  for (size_t r = 0; r < L.rows; ++r) {
    for (size_t c = 0; c < L.cols; ++c) {
      const double v = heat_value(map, r, c);
      if (std::isnan(v)) continue;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  L.any = lo <= hi;
  const bool any = L.any;
  L.tlo = any ? heat_transform(map, lo) : 0;
  L.thi = any ? heat_transform(map, hi) : 1;
  const double cw = L.cw = std::clamp(map.cell_width_px, 16, 400);
  const double ch = L.ch = std::clamp(map.cell_height_px, 16, 400);
  size_t row_chars = 0;
  for (const std::string& l : map.row_labels) row_chars = std::max(row_chars, l.size());
  const double row_label_w = L.row_label_w =
      std::clamp(kCharPx * static_cast<double>(row_chars), 24.0, 160.0);
  const double left = L.left = (map.row_title.empty() ? 12 : 34) + row_label_w + 8;
  const double top = L.top = kMarginTop;
  const double grid_w = L.grid_w = cw * static_cast<double>(L.cols);
  const double grid_h = L.grid_h = ch * static_cast<double>(L.rows);
  const double right = L.right = left + grid_w;
  L.bottom = top + grid_h;
  const double bottom = L.bottom;

  // Legend ticks and their labels.
  std::vector<double>& ticks = L.ticks;
  if (any) {
    ticks = lo == hi ? std::vector<double>{lo}
                     : (map.log_scale ? log_ticks(lo, hi) : linear_ticks(lo, hi));
    if (ticks.empty()) ticks = {lo, hi};
  }
  // Linear ticks share their decimals ("1.80", "1.85", "1.90").
  int decimals = -1;
  if (!map.log_scale && ticks.size() >= 2) {
    const double step = ticks[1] - ticks[0];
    bool plain = true;
    for (double v : ticks) plain &= v == 0 || (std::fabs(v) >= 1e-3 && std::fabs(v) < 1e5);
    if (plain && step > 0) {
      decimals = std::clamp(static_cast<int>(-std::floor(std::log10(step) + 1e-9)), 0, 6);
    }
  }
  std::vector<std::string>& tick_labels = L.tick_labels;
  size_t tick_chars = 0;
  for (double v : ticks) {
    const std::string text = map.tick_label  ? map.tick_label(v)
                             : decimals >= 0 ? fmt::format("{:.{}f}", v, decimals)
                                             : number_label(v);
    tick_labels.push_back(fit_label(text, 14));
    tick_chars = std::max(tick_chars, tick_labels.back().size());
  }
  const double legend_x = L.legend_x = right + 24;
  const double legend_w = L.legend_w =
      any ? std::max(kBarWidth + 8 + kCharPx * static_cast<double>(tick_chars),
                     kCharPx * static_cast<double>(std::min<size_t>(map.legend_title.size(), 24)))
          : kCharPx * 12;
  // Wide enough for the title and the note (up to 1200 px).
  L.width = std::ceil(std::max({legend_x + legend_w + kMarginRight,
                               std::min(kTitleCharPx * chars(map.title) + 40, 1200.0),
                               std::min(kCellCharPx * chars(map.note) + 16, 1200.0)}));
  const double note_y = L.note_y = bottom + (map.column_title.empty() ? 38 : 60);
  L.height = std::ceil(map.note.empty() ? note_y - 8 : note_y + 12);
  L.bar_h = std::clamp(grid_h, 120.0, 320.0);
  return L;
}

// The cells: colour and label.
std::string heat_cells_svg(const Heatmap& map, const HeatLayout& L) {
  const auto& rows = L.rows;
  const auto& cols = L.cols;
  const auto& cw = L.cw;
  const auto& ch = L.ch;
  const auto& left = L.left;
  const auto& top = L.top;
  std::string out;
  const double cell_chars = (cw - 6) / kCellCharPx;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) {
      const double v = heat_value(map, r, c);
      const bool missing = std::isnan(v);
      const uint32_t rgb = missing ? 0xd9d9d9 : viridis_rgb(heat_position(map, L, v));
      const std::string fill = missing ? std::string(kMissingFill) : hex(rgb);
      std::string label;
      if (r < map.cell_labels.size() && c < map.cell_labels[r].size())
        label = map.cell_labels[r][c];
      if (label.empty()) label = missing ? map.missing_label : number_label(v);
      const char* text_color = missing ? "#555" : luminance(rgb) > 0.2 ? "#111" : "white";
      const double x = left + cw * static_cast<double>(c), y = top + ch * static_cast<double>(r);
      out += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"white\"/>\n",
          px(x), px(y), px(cw), px(ch), fill);
      out += fmt::format(
          "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" dominant-baseline=\"middle\" "
          "font-size=\"11\" fill=\"{}\">{}</text>\n",
          px(x + cw / 2), px(y + ch / 2), text_color, svg_escape(fit_label(label, cell_chars)));
    }
  }
  return out;
}

// Row and column labels, axis titles and the note.
std::string heat_labels_svg(const Heatmap& map, const HeatLayout& L) {
  const auto& rows = L.rows;
  const auto& cols = L.cols;
  const auto& cw = L.cw;
  const auto& ch = L.ch;
  const auto& row_label_w = L.row_label_w;
  const auto& left = L.left;
  const auto& top = L.top;
  const auto& grid_w = L.grid_w;
  const auto& grid_h = L.grid_h;
  const auto& right = L.right;
  const auto& bottom = L.bottom;
  const auto& width = L.width;
  const auto& note_y = L.note_y;
  std::string out;
  for (size_t r = 0; r < rows; ++r) {
    const std::string l = r < map.row_labels.size() ? map.row_labels[r] : "";
    out += fmt::format(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" dominant-baseline=\"middle\">{}</text>\n",
        px(left - 6), px(top + ch * (static_cast<double>(r) + 0.5)),
        svg_escape(fit_label(l, row_label_w / kCharPx)));
  }
  for (size_t c = 0; c < cols; ++c) {
    const std::string l = c < map.column_labels.size() ? map.column_labels[c] : "";
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                        px(left + cw * (static_cast<double>(c) + 0.5)), px(bottom + 18),
                        svg_escape(fit_label(l, cw / kCharPx)));
  }
  if (!map.column_title.empty()) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                        px((left + right) / 2), px(bottom + 40),
                        svg_escape(fit_label(map.column_title, std::max(grid_w, 200.0) / kCharPx)));
  }
  if (!map.note.empty()) {
    out += fmt::format("<text x=\"8\" y=\"{}\" font-size=\"11\" fill=\"#555\">{}</text>\n",
                        px(note_y), svg_escape(fit_label(map.note, (width - 16) / kCellCharPx)));
  }
  if (!map.row_title.empty()) {
    const double cx = 16, cy = (top + bottom) / 2;
    out += fmt::format(
        "<text x=\"{0}\" y=\"{1}\" text-anchor=\"middle\" transform=\"rotate(-90 {0} "
        "{1})\">{2}</text>\n",
        px(cx), px(cy), svg_escape(fit_label(map.row_title, std::max(grid_h, 120.0) / kCharPx)));
  }

  return out;
}

// The legend into *body, its gradient into *defs (its id hashes *body).
void heat_legend_svg(const Heatmap& map, const HeatLayout& L, std::string* body,
                     std::string* defs) {
  const auto& tlo = L.tlo;
  const auto& thi = L.thi;
  const auto& any = L.any;
  const auto& top = L.top;
  const auto& legend_x = L.legend_x;
  const auto& bar_h = L.bar_h;
  const auto& ticks = L.ticks;
  const auto& tick_labels = L.tick_labels;
  // Legend: a colour bar (high values at the top) with ticks, or a note when
  // no cell has a value.
  if (!map.legend_title.empty()) {
    *body += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", px(legend_x), px(top - 8),
                        svg_escape(fit_label(map.legend_title, 24)));
  }
  if (any) {
    std::string stops;
    for (int k = 0; k < kViridisStops; ++k) {
      // offset 0 is the top of the bar: the highest value.
      const double t = 1.0 - static_cast<double>(k) / (kViridisStops - 1);
      stops += fmt::format("<stop offset=\"{:.1f}\" stop-color=\"{}\"/>", k / 10.0,
                           viridis_color(map.reverse ? 1 - t : t));
    }
    const std::string id = fmt::format("llmplan-heat-{:016x}", svg_hash(*body + stops));
    *defs = fmt::format(
        "<defs><linearGradient id=\"{}\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">{}</linearGradient>"
        "</defs>\n",
        id, stops);
    *body += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"url(#{})\" stroke=\"#333\"/>\n",
        px(legend_x), px(top), px(kBarWidth), px(bar_h), id);
    for (size_t i = 0; i < ticks.size(); ++i) {
      const double span = thi - tlo;
      const double t = span > 0 ? (heat_transform(map, ticks[i]) - tlo) / span : 0.5;
      const double y = top + bar_h * (1 - std::clamp(t, 0.0, 1.0));
      *body += fmt::format("<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"#333\"/>\n",
                          px(legend_x + kBarWidth), px(legend_x + kBarWidth + 4), px(y));
      *body += fmt::format("<text x=\"{}\" y=\"{}\" dominant-baseline=\"middle\">{}</text>\n",
                          px(legend_x + kBarWidth + 7), px(y), svg_escape(tick_labels[i]));
    }
  } else {
    *body += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#555\">no values</text>\n", px(legend_x),
                        px(top + 12));
  }
}

// The title, over the whole width.
std::string heat_title_svg(const Heatmap& map, const HeatLayout& L) {
  const auto& width = L.width;
  std::string out;
  if (!map.title.empty()) {
    out += fmt::format(
        "<text x=\"{}\" y=\"24\" text-anchor=\"middle\" font-size=\"15\" "
        "font-weight=\"bold\">{}</text>\n",
        px(width / 2), svg_escape(fit_label(map.title, std::max(width - 20, 100.0) / kTitleCharPx)));
  }

  return out;
}

}  // namespace

std::string render_heatmap_svg(const Heatmap& map) {
  size_t rows = map.row_labels.size(), cols = map.column_labels.size();
  rows = std::max(rows, map.values.size());
  for (const auto& r : map.values) cols = std::max(cols, r.size());
  const std::string header_fmt =
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n";
  if (rows == 0 || cols == 0) return empty_heatmap_svg(map, header_fmt);
  const HeatLayout L = heat_layout(map, rows, cols);
  std::string body = heat_cells_svg(map, L);
  body += heat_labels_svg(map, L);
  // Legend: a colour bar (high values at the top) with ticks, or a note when
  // no cell has a value.
  std::string defs;
  heat_legend_svg(map, L, &body, &defs);
  body += heat_title_svg(map, L);

  std::string svg = fmt::format(fmt::runtime(header_fmt), L.width, L.height);
  svg += defs;
  svg += body;
  svg += "</svg>\n";
  return svg;
}

}  // namespace llmplan::reports

#include "reports/svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "reports/svg_plot_axes.h"

namespace llmplan::reports {
namespace {

using plot_axes::check_axis;
using plot_axes::check_value;
using plot_axes::make_scale;
using plot_axes::Scale;
using plot_axes::Tick;
using plot_axes::ticks_for;

constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr int kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);
constexpr double kMarginLeft = 78, kMarginRight = 24, kMarginTop = 40, kMarginBottom = 56;

std::string px(double v) { return fmt::format("{:.2f}", v); }

constexpr LineStyle kLineCycle[] = {LineStyle::kSolid, LineStyle::kDashed, LineStyle::kDotted,
                                    LineStyle::kDashDot, LineStyle::kLongDash};
constexpr MarkerShape kMarkerCycle[] = {MarkerShape::kCircle, MarkerShape::kSquare,
                                        MarkerShape::kTriangle, MarkerShape::kDiamond,
                                        MarkerShape::kCross};

// The stroke-dasharray of a style ("" for solid).
const char* dash_pattern(LineStyle style) {
  switch (style) {
    case LineStyle::kDashed:
      return "6 4";
    case LineStyle::kDotted:
      return "2 3";
    case LineStyle::kDashDot:
      return "8 3 2 3";
    case LineStyle::kLongDash:
      return "14 4";
    default:
      return "";
  }
}

std::string dash_attribute(LineStyle style) {
  const std::string dash = dash_pattern(style);
  return dash.empty() ? std::string() : " stroke-dasharray=\"" + dash + "\"";
}

// Resolves kAuto entries: the k-th automatic one takes the k-th entry of
// `cycle` not asked for explicitly (all of `cycle` when every one is taken).
template <typename T, size_t N>
std::vector<T> resolve_auto(const std::vector<T>& asked, const T (&cycle)[N], T auto_value) {
  std::vector<T> free;
  for (T c : cycle) {
    if (std::find(asked.begin(), asked.end(), c) == asked.end()) free.push_back(c);
  }
  if (free.empty()) free.assign(std::begin(cycle), std::end(cycle));
  std::vector<T> out;
  size_t k = 0;
  for (T a : asked) out.push_back(a == auto_value ? free[k++ % free.size()] : a);
  return out;
}

// One marker of `shape` centred at (cx, cy), radius about r.
std::string marker_svg(MarkerShape shape, double cx, double cy, double r, const std::string& color,
                       const char* extra) {
  switch (shape) {
    case MarkerShape::kSquare:
      return fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"{}/>\n",
                         px(cx - r * 0.9), px(cy - r * 0.9), px(1.8 * r), px(1.8 * r), color,
                         extra);
    case MarkerShape::kTriangle:
      return fmt::format("<polygon points=\"{},{} {},{} {},{}\" fill=\"{}\"{}/>\n", px(cx),
                         px(cy - 1.2 * r), px(cx - 1.1 * r), px(cy + 0.8 * r), px(cx + 1.1 * r),
                         px(cy + 0.8 * r), color, extra);
    case MarkerShape::kDiamond:
      return fmt::format("<polygon points=\"{},{} {},{} {},{} {},{}\" fill=\"{}\"{}/>\n", px(cx),
                         px(cy - 1.3 * r), px(cx + 1.3 * r), px(cy), px(cx), px(cy + 1.3 * r),
                         px(cx - 1.3 * r), px(cy), color, extra);
    case MarkerShape::kCross:
      return fmt::format(
          "<path d=\"M{0},{1} L{2},{3} M{0},{3} L{2},{1}\" stroke=\"{4}\" stroke-width=\"2\" "
          "fill=\"none\"{5}/>\n",
          px(cx - r), px(cy - r), px(cx + r), px(cy + r), color, extra);
    default:
      return fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\"{}/>\n", px(cx), px(cy),
                         r == 3 ? "3" : px(r), color, extra);
  }
}

// Text with a white halo, readable over grid lines and data.
std::string halo_text(double x, double y, const char* anchor, const std::string& text,
                      const std::string& style) {
  return fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"{}\" stroke=\"white\" stroke-width=\"3\" "
      "paint-order=\"stroke\"{}>{}</text>\n",
      px(x), px(y), anchor, style, svg_escape(text));
}

// Cuts `label` to at most `chars` characters, ending in "...".
std::string fit_label(const std::string& label, size_t chars) {
  if (label.size() <= chars || chars < 4) return label;
  return label.substr(0, chars - 3) + "...";
}

}  // namespace

std::string svg_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += (static_cast<unsigned char>(c) < 0x20 && c != '\t') ? ' ' : c;
    }
  }
  return out;
}

std::string svg_short_number(double v) {
  std::string s = fmt::format("{:.3g}", v);
  const size_t e = s.find('e');
  if (e != std::string::npos) {  // drop '+' and leading zeros of the exponent
    std::string mant = s.substr(0, e), exp = s.substr(e + 1);
    const bool neg = !exp.empty() && exp[0] == '-';
    if (!exp.empty() && (exp[0] == '+' || exp[0] == '-')) exp.erase(0, 1);
    while (exp.size() > 1 && exp[0] == '0') exp.erase(0, 1);
    s = mant + "e" + (neg ? "-" : "") + exp;
  }
  return s;
}

uint64_t svg_hash(const std::string& text) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

namespace {

// The characters' width (px) the layout assumes, and the gap left of the legend.
constexpr double kCharPx = 6.6, kLegendGap = 12;

// Checks every value (finite, positive on a log axis) and collects the x
// and y values the scales must show.
Status collect_values(const Plot& plot, std::vector<double>* xs, std::vector<double>* ys) {
  LLMPLAN_RETURN_IF_ERROR(check_axis(plot.x, "x"));
  LLMPLAN_RETURN_IF_ERROR(check_axis(plot.y, "y"));
  for (size_t i = 0; i < plot.series.size(); ++i) {
    const PlotSeries& s = plot.series[i];
    const std::string where = fmt::format("series {} (\"{}\")", i, s.label);
    if (s.x.size() != s.y.size()) {
      return Status::invalid_argument(
          fmt::format("{}: {} x values but {} y values", where, s.x.size(), s.y.size()));
    }
    for (size_t j = 0; j < s.x.size(); ++j) {
      LLMPLAN_RETURN_IF_ERROR(
          check_value(s.x[j], plot.x.log_scale, where + " x[" + std::to_string(j) + "]"));
      LLMPLAN_RETURN_IF_ERROR(
          check_value(s.y[j], plot.y.log_scale, where + " y[" + std::to_string(j) + "]"));
      xs->push_back(s.x[j]);
      ys->push_back(s.y[j]);
    }
  }
  for (size_t i = 0; i < plot.references.size(); ++i) {
    const ReferenceLine& r = plot.references[i];
    const std::string where = fmt::format("reference line {}", i);
    if (r.kind == ReferenceKind::kHorizontal) {
      LLMPLAN_RETURN_IF_ERROR(check_value(r.value, plot.y.log_scale, where));
      ys->push_back(r.value);
    } else if (r.kind == ReferenceKind::kVertical) {
      LLMPLAN_RETURN_IF_ERROR(check_value(r.value, plot.x.log_scale, where));
      xs->push_back(r.value);
    }
  }
  for (size_t i = 0; i < plot.highlights.size(); ++i) {
    const PlotHighlight& p = plot.highlights[i];
    const std::string where = fmt::format("highlight {} (\"{}\")", i, p.label);
    LLMPLAN_RETURN_IF_ERROR(check_value(p.x, plot.x.log_scale, where + " x"));
    LLMPLAN_RETURN_IF_ERROR(check_value(p.y, plot.y.log_scale, where + " y"));
    xs->push_back(p.x);
    ys->push_back(p.y);
  }
  if ((xs->empty() && (std::isnan(plot.x.min) || std::isnan(plot.x.max))) ||
      (ys->empty() && (std::isnan(plot.y.min) || std::isnan(plot.y.max)))) {
    return Status::invalid_argument("plot \"" + plot.title + "\" has no data to draw");
  }

  return Status();
}

// One legend entry: a series or a labelled reference line.
struct LegendEntry {
  std::string label, color;
  bool marker = false, reference = false;
  LineStyle style = LineStyle::kSolid;
  MarkerShape shape = MarkerShape::kCircle;
};

// How the series are drawn: line styles (of the line series, in order),
// marker shapes (of the scatter series), every series' colour, the legend.
struct SeriesLook {
  std::vector<LineStyle> styles;
  std::vector<MarkerShape> markers;
  std::vector<std::string> colors;
  std::vector<LegendEntry> legend;
};

SeriesLook series_look(const Plot& plot) {
  SeriesLook look;
  // Styles of the series.
  std::vector<LineStyle> asked_styles;
  std::vector<MarkerShape> asked_markers;
  for (const PlotSeries& s : plot.series) {
    if (s.kind == SeriesKind::kLine)
      asked_styles.push_back(s.dashed ? LineStyle::kDashed : s.style);
    if (s.kind == SeriesKind::kScatter) asked_markers.push_back(s.marker);
  }
  look.styles = resolve_auto(asked_styles, kLineCycle, LineStyle::kAuto);
  look.markers =
      resolve_auto(asked_markers, kMarkerCycle, MarkerShape::kAuto);

  // The legend, in drawing order: labelled references, then labelled series.
  std::vector<LegendEntry>& legend = look.legend;
  for (const ReferenceLine& r : plot.references) {
    if (!r.label.empty()) {
      legend.push_back({r.label, "#888", false, true, LineStyle::kDashed, MarkerShape::kCircle});
    }
  }
  std::vector<std::string>& colors = look.colors;
  {
    int palette_index = 0;
    size_t line_k = 0, scatter_k = 0;
    for (const PlotSeries& s : plot.series) {
      colors.push_back(s.color.empty() ? kPalette[palette_index++ % kPaletteSize] : s.color);
      const bool line = s.kind == SeriesKind::kLine;
      const LineStyle style = line ? look.styles[line_k++] : LineStyle::kSolid;
      const MarkerShape shape = line ? MarkerShape::kCircle : look.markers[scatter_k++];
      if (!s.label.empty()) legend.push_back({s.label, colors.back(), !line, false, style, shape});
    }
  }

  return look;
}

// The image size, the plot frame's edges (px) and the legend's width.
struct Frame {
  double w = 0, h = 0, left = 0, right = 0, top = 0, bottom = 0;
  double legend_w = 0;
  size_t legend_chars = 0;  // the longest label shown in full
};

Frame plot_frame(const Plot& plot, const std::vector<LegendEntry>& legend) {
  Frame fr;
  fr.w = plot.width_px;
  fr.h = plot.height_px;
  const double w = fr.w;
  // The legend sits right of the frame; it takes at most 40 % of the width.
  double& legend_w = fr.legend_w;
  size_t& legend_chars = fr.legend_chars;
  if (!legend.empty()) {
    for (const LegendEntry& e : legend) legend_chars = std::max(legend_chars, e.label.size());
    const size_t max_chars = static_cast<size_t>(std::max(4.0, (0.4 * w - 44) / kCharPx));
    legend_chars = std::min(legend_chars, max_chars);
    legend_w = 44 + kCharPx * static_cast<double>(legend_chars);
  }
  bool top_labels = false;
  for (const ReferenceLine& r : plot.references) {
    top_labels |= r.kind == ReferenceKind::kVertical && !r.axis_label.empty();
  }
  fr.left = kMarginLeft;
  fr.right = w - kMarginRight - (legend.empty() ? 0 : legend_w + kLegendGap - 8);
  fr.top = kMarginTop + (top_labels ? 14 : 0);
  fr.bottom = fr.h - kMarginBottom;
  return fr;
}

// The grid lines, tick labels and the frame.
std::string grid_svg(const Scale& sx, const Scale& sy, const Frame& fr) {
  const double left = fr.left;
  const double right = fr.right;
  const double top = fr.top;
  const double bottom = fr.bottom;
  std::string body;
  // Grid and tick labels.
  for (const Tick& t : ticks_for(sx)) {
    const std::string x = px(sx.to_pixel(t.value));
    body += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#e5e5e5\"/>\n",
                        x, px(top), px(bottom));
    body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x,
                        px(bottom + 18), t.label);
  }
  for (const Tick& t : ticks_for(sy)) {
    const std::string y = px(sy.to_pixel(t.value));
    body += fmt::format("<line x1=\"{1}\" y1=\"{0}\" x2=\"{2}\" y2=\"{0}\" stroke=\"#e5e5e5\"/>\n",
                        y, px(left), px(right));
    body += fmt::format(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" dominant-baseline=\"middle\">{}</text>\n",
        px(left - 6), y, t.label);
  }
  body += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n",
      px(left), px(top), px(right - left), px(bottom - top));

  return body;
}

// The reference lines into *contents (clipped) and their axis labels into
// *labels.
void references_svg(const Plot& plot, const Scale& sx, const Scale& sy, const Frame& fr,
                    std::string* contents, std::string* labels) {
  const double w = fr.w;
  const double left = fr.left;
  const double right = fr.right;
  const double top = fr.top;
  const double bottom = fr.bottom;
  for (const ReferenceLine& r : plot.references) {
    std::string points;
    if (r.kind == ReferenceKind::kHorizontal) {
      const double y = sy.to_pixel(r.value);
      points = px(left) + "," + px(y) + " " + px(right) + "," + px(y);
      if (!r.axis_label.empty()) {
        *labels +=
            fmt::format("<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"#555\"/>\n",
                        px(right), px(right + 5), px(y));
        // Above the line, or below it when the frame's top edge is too close.
        *labels += halo_text(right - 4, y - 14 < top ? y + 13 : y - 4, "end", r.axis_label,
                            " fill=\"#444\" font-size=\"11\"");
      }
    } else if (r.kind == ReferenceKind::kVertical) {
      const double x = sx.to_pixel(r.value);
      points = px(x) + "," + px(top) + " " + px(x) + "," + px(bottom);
      if (!r.axis_label.empty()) {
        *labels +=
            fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#555\"/>\n",
                        px(x), px(top - 5), px(top));
        const double half = 0.5 * kCharPx * static_cast<double>(r.axis_label.size());
        const char* anchor = x + half > w - 4 ? "end" : x - half < 4 ? "start" : "middle";
        *labels += halo_text(x, top - 8, anchor, r.axis_label, " fill=\"#444\" font-size=\"11\"");
      }
    } else {  // y = x, sampled so it is right on mixed log/linear axes
      constexpr int kSamples = 64;
      for (int i = 0; i <= kSamples; ++i) {
        const double t =
            sx.transform(sx.lo) + (sx.transform(sx.hi) - sx.transform(sx.lo)) * i / kSamples;
        const double v = sx.log ? std::pow(10.0, t) : t;
        if (sy.log && v <= 0) continue;
        if (!points.empty()) points += ' ';
        points += px(sx.to_pixel(v));
        points += ',';
        points += px(sy.to_pixel(v));
      }
    }
    *contents += fmt::format(
        "<polyline points=\"{}\" fill=\"none\" stroke=\"#888\" stroke-width=\"1\" "
        "stroke-dasharray=\"4 3\"/>\n",
        points);
  }
}

// The series' lines and markers (clipped).
std::string series_svg(const Plot& plot, const SeriesLook& look, const Scale& sx, const Scale& sy) {
  std::string contents;
  {
    size_t line_k = 0, scatter_k = 0;
    for (size_t i = 0; i < plot.series.size(); ++i) {
      const PlotSeries& s = plot.series[i];
      const std::string color = svg_escape(look.colors[i]);
      if (s.kind == SeriesKind::kLine) {
        std::string points;
        for (size_t j = 0; j < s.x.size(); ++j) {
          if (j > 0) points += ' ';
          points += px(sx.to_pixel(s.x[j])) + "," + px(sy.to_pixel(s.y[j]));
        }
        contents += fmt::format(
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n", points,
            color, dash_attribute(look.styles[line_k++]));
      } else {
        const MarkerShape shape = look.markers[scatter_k++];
        for (size_t j = 0; j < s.x.size(); ++j) {
          contents += marker_svg(shape, sx.to_pixel(s.x[j]), sy.to_pixel(s.y[j]), 3, color,
                                 " fill-opacity=\"0.75\"");
        }
      }
    }
  }
  return contents;
}

// Highlighted points, over everything, with their labels kept in the frame.
std::string highlights_svg(const Plot& plot, const Scale& sx, const Scale& sy, const Frame& fr) {
  const double left = fr.left;
  const double right = fr.right;
  const double top = fr.top;
  std::string body;
  for (const PlotHighlight& p : plot.highlights) {
    const std::string color = svg_escape(p.color.empty() ? "#d62728" : p.color);
    const double x = sx.to_pixel(p.x), y = sy.to_pixel(p.y);
    body += fmt::format(
        "<circle cx=\"{0}\" cy=\"{1}\" r=\"7\" fill=\"none\" stroke=\"{2}\" stroke-width=\"2\"/>\n"
        "<circle cx=\"{0}\" cy=\"{1}\" r=\"3.5\" fill=\"{2}\"/>\n",
        px(x), px(y), color);
    if (p.label.empty()) continue;
    const double text_w = kCharPx * static_cast<double>(p.label.size());
    const bool to_left = x + 10 + text_w > right && x - 10 - text_w >= left;
    const double ty = y - 10 < top + 12 ? y + 18 : y - 10;
    body += halo_text(to_left ? x - 10 : x + 10, ty, to_left ? "end" : "start", p.label,
                      " font-weight=\"bold\" fill=\"" + color + "\"");
  }

  return body;
}

// The legend, right of the frame.
std::string legend_svg(const std::vector<LegendEntry>& legend, const Frame& fr) {
  const double right = fr.right;
  const double top = fr.top;
  const double legend_w = fr.legend_w;
  const size_t legend_chars = fr.legend_chars;
  std::string body;
  if (!legend.empty()) {
    const double entry_h = 18;
    const double box_h = 8 + entry_h * static_cast<double>(legend.size());
    const double bx = right + kLegendGap, by = top;
    body += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"white\" stroke=\"#bbb\"/>\n",
        px(bx), px(by), px(legend_w), px(box_h));
    for (size_t i = 0; i < legend.size(); ++i) {
      const LegendEntry& e = legend[i];
      const double cy = by + 4 + entry_h * (static_cast<double>(i) + 0.5);
      if (e.marker) {
        body += marker_svg(e.shape, bx + 16, cy, 3.5, svg_escape(e.color), "");
      } else {
        body += fmt::format(
            "<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"{3}\" "
            "stroke-width=\"{4}\"{5}/>\n",
            px(bx + 4), px(bx + 30), px(cy), svg_escape(e.color), e.reference ? 1 : 2,
            e.reference ? std::string(" stroke-dasharray=\"4 3\"") : dash_attribute(e.style));
      }
      body += fmt::format("<text x=\"{}\" y=\"{}\" dominant-baseline=\"middle\">{}</text>\n",
                          px(bx + 36), px(cy), svg_escape(fit_label(e.label, legend_chars)));
    }
  }
  return body;
}

// The plot's and the axes' titles.
std::string titles_svg(const Plot& plot, const Frame& fr) {
  const double h = fr.h;
  const double left = fr.left;
  const double right = fr.right;
  const double top = fr.top;
  const double bottom = fr.bottom;
  std::string body;
  if (!plot.title.empty()) {
    body += fmt::format(
        "<text x=\"{}\" y=\"24\" text-anchor=\"middle\" font-size=\"15\" "
        "font-weight=\"bold\">{}</text>\n",
        px((left + right) / 2), svg_escape(plot.title));
  }
  if (!plot.x.title.empty()) {
    body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                        px((left + right) / 2), px(h - 12), svg_escape(plot.x.title));
  }
  if (!plot.y.title.empty()) {
    const double cx = 18, cy = (top + bottom) / 2;
    body += fmt::format(
        "<text x=\"{0}\" y=\"{1}\" text-anchor=\"middle\" transform=\"rotate(-90 {0} "
        "{1})\">{2}</text>\n",
        px(cx), px(cy), svg_escape(plot.y.title));
  }

  return body;
}

}  // namespace

Result<std::string> render_svg(const Plot& plot) {
  if (plot.width_px < 200 || plot.height_px < 150) {
    return Status::invalid_argument(fmt::format(
        "plot size {}x{} px is too small (at least 200x150)", plot.width_px, plot.height_px));
  }
  std::vector<double> xs, ys;
  LLMPLAN_RETURN_IF_ERROR(collect_values(plot, &xs, &ys));
  const SeriesLook look = series_look(plot);
  const Frame fr = plot_frame(plot, look.legend);
  const double left = fr.left;
  const double right = fr.right;
  const double top = fr.top;
  const double bottom = fr.bottom;
  const Scale sx = make_scale(plot.x, xs, left, right);
  const Scale sy = make_scale(plot.y, ys, bottom, top);

  std::string body = grid_svg(sx, sy, fr);
  // Plot contents, clipped to the frame.
  std::string contents, labels;
  references_svg(plot, sx, sy, fr, &contents, &labels);
  contents += series_svg(plot, look, sx, sy);
  const std::string clip_id = fmt::format("llmplan-clip-{:016x}", svg_hash(body + contents));
  body += fmt::format("<g clip-path=\"url(#{})\">\n{}</g>\n", clip_id, contents);
  body += labels;
  body += highlights_svg(plot, sx, sy, fr);
  body += legend_svg(look.legend, fr);
  body += titles_svg(plot, fr);

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n",
      plot.width_px, plot.height_px);
  svg += fmt::format("<rect width=\"{}\" height=\"{}\" fill=\"white\"/>\n", plot.width_px,
                     plot.height_px);
  svg += fmt::format(
      "<defs><clipPath id=\"{}\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/></clipPath>"
      "</defs>\n",
      clip_id, px(left), px(top), px(right - left), px(bottom - top));
  svg += body;
  svg += "</svg>\n";
  return svg;
}

}  // namespace llmplan::reports

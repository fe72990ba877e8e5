#include "reports/svg_plot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/reports/svg_balanced.h"

namespace llmplan::reports {
namespace {

using testing::balanced;

Plot loss_plot() {
  Plot plot;
  plot.title = "Loss vs compute";
  plot.x = {"compute (FLOP)", true};
  plot.y = {"loss", true};
  plot.series.push_back(
      {"runs", SeriesKind::kScatter, {1e18, 1e20, 1e22}, {4.0, 3.0, 2.2}, "", false});
  plot.series.push_back({"frontier", SeriesKind::kLine, {1e18, 1e22}, {3.8, 2.1}, "", false});
  plot.references.push_back({ReferenceKind::kHorizontal, 1.8, "E"});
  return plot;
}

TEST(SvgPlot, DrawsSeriesAxesAndLegend) {
  Result<std::string> svg = render_svg(loss_plot());
  ASSERT_TRUE(svg.ok()) << svg.status().message();
  EXPECT_EQ(svg->rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(svg->substr(svg->size() - 7), "</svg>\n");
  EXPECT_TRUE(balanced(*svg));
  EXPECT_FALSE(balanced("<g><text>x</g></text>"));  // the checker can fail
  EXPECT_NE(svg->find(">Loss vs compute</text>"), std::string::npos);
  EXPECT_NE(svg->find(">compute (FLOP)</text>"), std::string::npos);
  EXPECT_NE(svg->find("rotate(-90"), std::string::npos);  // y title
  EXPECT_NE(svg->find(">runs</text>"), std::string::npos);
  EXPECT_NE(svg->find(">frontier</text>"), std::string::npos);
  EXPECT_NE(svg->find(">E</text>"), std::string::npos);
  EXPECT_NE(svg->find("<polyline"), std::string::npos);
  size_t circles = 0;
  for (size_t p = svg->find("<circle"); p != std::string::npos; p = svg->find("<circle", p + 1)) {
    ++circles;
  }
  EXPECT_EQ(circles, 3u + 1u);  // three points and the legend marker
  // Decade ticks on the log x axis, written as powers of ten.
  for (int k = 18; k <= 22; ++k) {
    EXPECT_NE(svg->find(">10<tspan dy=\"-0.5em\" font-size=\"0.75em\">" + std::to_string(k) +
                        "</tspan></text>"),
              std::string::npos)
        << k;
  }
  // Well under one decade on the log y axis: round linear steps.
  for (const char* label : {">2.0</text>", ">2.5</text>", ">3.0</text>", ">3.5</text>"}) {
    EXPECT_NE(svg->find(label), std::string::npos) << label;
  }
}

TEST(SvgPlot, LinearTicksAreRoundNumbers) {
  Plot plot;
  plot.x = {"x", false, 0, 10};
  plot.y = {"y", false, 0, 1};
  plot.series.push_back({"", SeriesKind::kLine, {0, 10}, {0, 1}, "red", true});
  plot.references.push_back({ReferenceKind::kIdentity, 0, ""});
  Result<std::string> svg = render_svg(plot);
  ASSERT_TRUE(svg.ok()) << svg.status().message();
  for (const char* label : {">0</text>", ">2</text>", ">4</text>", ">10</text>", ">0.2</text>",
                            ">0.8</text>", ">1.0</text>"}) {
    EXPECT_NE(svg->find(label), std::string::npos) << label;
  }
  EXPECT_NE(svg->find("stroke=\"red\""), std::string::npos);
  EXPECT_NE(svg->find("stroke-dasharray=\"6 4\""), std::string::npos);
  EXPECT_EQ(svg->find(">y = x</text>"), std::string::npos);  // unlabelled: not in a legend
  EXPECT_TRUE(balanced(*svg));
}

TEST(SvgPlot, EscapesTextAndIsDeterministic) {
  Plot plot = loss_plot();
  plot.title = "a < b & \"c\"";
  const std::string svg = render_svg(plot).value();
  EXPECT_NE(svg.find(">a &lt; b &amp; &quot;c&quot;</text>"), std::string::npos);
  EXPECT_EQ(svg, render_svg(plot).value());
  // Different data, different clip-path id (plots can share one page).
  Plot other = plot;
  other.series[0].y[0] = 4.5;
  const std::string svg2 = render_svg(other).value();
  auto clip_id = [](const std::string& s) {
    const size_t p = s.find("clipPath id=\"");
    return s.substr(p, 40);
  };
  EXPECT_NE(clip_id(svg), clip_id(svg2));
}

TEST(SvgPlot, BadInputsAreErrors) {
  Plot plot = loss_plot();
  plot.series[1].y.pop_back();
  EXPECT_EQ(render_svg(plot).status().message(),
            "series 1 (\"frontier\"): 2 x values but 1 y values");
  plot = loss_plot();
  plot.series[0].y[1] = 0;
  EXPECT_EQ(render_svg(plot).status().message(),
            "series 0 (\"runs\") y[1]: 0 cannot be drawn on a log axis");
  plot = loss_plot();
  plot.series[0].x[2] = NAN;
  EXPECT_EQ(render_svg(plot).status().message(), "series 0 (\"runs\") x[2]: value is not finite");
  plot = loss_plot();
  plot.x.min = 5;
  plot.x.max = 1;
  EXPECT_EQ(render_svg(plot).status().message(), "x axis: min must be below max");
  plot = loss_plot();
  plot.y.min = -1;
  EXPECT_EQ(render_svg(plot).status().message(), "y axis: a log axis needs a positive range");
  plot = loss_plot();
  plot.width_px = 50;
  EXPECT_NE(render_svg(plot).status().message().find("too small"), std::string::npos);
  Plot empty;
  empty.title = "nothing";
  EXPECT_EQ(render_svg(empty).status().message(), "plot \"nothing\" has no data to draw");
}

TEST(SvgPlot, LogAxisOverOneToTwoDecadesUsesOneTwoFive) {
  Plot plot;
  plot.y.log_scale = true;
  plot.series.push_back({"", SeriesKind::kLine, {0, 1}, {1.5, 60}, "", false});
  const std::string svg = render_svg(plot).value();
  for (const char* label : {">2</text>", ">5</text>", ">10</text>", ">20</text>", ">50</text>"}) {
    EXPECT_NE(svg.find(label), std::string::npos) << label;
  }
}

TEST(SvgPlot, SinglePointGetsARange) {
  Plot plot;
  plot.series.push_back({"one", SeriesKind::kScatter, {3}, {3}, "", false});
  Result<std::string> svg = render_svg(plot);
  ASSERT_TRUE(svg.ok()) << svg.status().message();
  EXPECT_TRUE(balanced(*svg));
  EXPECT_NE(svg->find(">3.0</text>"), std::string::npos);
}

// The numeric value of attribute `name` in the first element of `svg` at or
// after `from` that has it (NaN when none).
double attribute(const std::string& svg, const std::string& name, size_t from = 0) {
  const size_t at = svg.find(" " + name + "=\"", from);
  if (at == std::string::npos) return NAN;
  return std::strtod(svg.c_str() + at + name.size() + 3, nullptr);
}

TEST(SvgPlot, LegendSitsRightOfTheFrame) {
  const std::string svg = render_svg(loss_plot()).value();
  // The frame is the first rect with stroke="#333"; the legend box follows it.
  const size_t frame = svg.find("<rect x=", svg.find("</text>"));
  ASSERT_NE(frame, std::string::npos);
  const double frame_right = attribute(svg, "x", frame) + attribute(svg, "width", frame);
  const size_t box = svg.find("fill=\"white\" stroke=\"#bbb\"");
  ASSERT_NE(box, std::string::npos);
  const double box_x = attribute(svg, "x", svg.rfind("<rect", box));
  const double box_w = attribute(svg, "width", svg.rfind("<rect", box));
  EXPECT_GT(box_x, frame_right);
  EXPECT_LE(box_x + box_w, 720);
  // Without labels there is no legend and the frame spans the width.
  Plot bare = loss_plot();
  for (PlotSeries& s : bare.series) s.label.clear();
  bare.references.clear();
  const std::string b = render_svg(bare).value();
  EXPECT_EQ(b.find("stroke=\"#bbb\""), std::string::npos);
  const size_t bare_frame = b.find("stroke=\"#333\"");
  const size_t bare_rect = b.rfind("<rect", bare_frame);
  EXPECT_GT(attribute(b, "x", bare_rect) + attribute(b, "width", bare_rect), frame_right + 100);
}

TEST(SvgPlot, SeriesGetDistinctDashPatternsAndMarkers) {
  Plot plot;
  plot.x = {"x", false};
  plot.y = {"y", false};
  for (int k = 0; k < 3; ++k) {
    plot.series.push_back({"line " + std::to_string(k), SeriesKind::kLine, {0, 1},
                           {1.0 * k, 1.0 * k + 1}, "", false});
  }
  plot.series.push_back({"a", SeriesKind::kScatter, {0.5}, {0.5}, "", false});
  plot.series.push_back({"b", SeriesKind::kScatter, {0.6}, {0.6}, "", false});
  const std::string svg = render_svg(plot).value();
  // Solid, dashed, dotted: each pattern once in the data and once in the legend.
  for (const char* dash : {"stroke-dasharray=\"6 4\"", "stroke-dasharray=\"2 3\""}) {
    size_t count = 0;
    for (size_t at = svg.find(dash); at != std::string::npos; at = svg.find(dash, at + 1)) ++count;
    EXPECT_EQ(count, 2u) << dash;
  }
  EXPECT_EQ(svg.find("stroke-dasharray=\"8 3 2 3\""), std::string::npos);
  EXPECT_NE(svg.find("<circle"), std::string::npos);  // first scatter series
  EXPECT_NE(svg.find("<rect x=\"", svg.find("<g clip-path")), std::string::npos);  // second
  // An explicit style is kept and taken out of the automatic cycle.
  plot.series[0].style = LineStyle::kDashed;
  const std::string again = render_svg(plot).value();
  EXPECT_NE(again.find("stroke-dasharray=\"6 4\""), std::string::npos);
  EXPECT_NE(again.find("stroke-dasharray=\"2 3\""), std::string::npos);
  EXPECT_NE(again.find("stroke-width=\"2\"/>"), std::string::npos);  // a solid line
  size_t dashed = 0;
  for (size_t at = again.find("\"6 4\""); at != std::string::npos; at = again.find("\"6 4\"", at + 1)) {
    ++dashed;
  }
  EXPECT_EQ(dashed, 2u);  // only series 0 (and its legend entry)
  EXPECT_TRUE(balanced(again));
}

TEST(SvgPlot, HighlightAndAxisLabelledReference) {
  Plot plot;
  plot.x = {"days", false};
  plot.y = {"params", true};
  plot.series.push_back({"feasible", SeriesKind::kLine, {5, 10, 40}, {1e9, 1e10, 1e11}, "", false});
  plot.references.push_back({ReferenceKind::kVertical, 30, "deadline", "deadline 30 d"});
  plot.highlights.push_back({25, 5e10, "answer: 50B", ""});
  const Result<std::string> svg = render_svg(plot);
  ASSERT_TRUE(svg.ok()) << svg.status().message();
  EXPECT_TRUE(balanced(*svg));
  EXPECT_NE(svg->find(">deadline 30 d</text>"), std::string::npos);
  EXPECT_NE(svg->find(">answer: 50B</text>"), std::string::npos);
  EXPECT_NE(svg->find("r=\"7\" fill=\"none\" stroke=\"#d62728\""), std::string::npos);
  // The axis label sits above the frame, centred on the line.
  const size_t label = svg->rfind("<text", svg->find(">deadline 30 d</text>"));
  const double frame_top = attribute(*svg, "y", svg->rfind("<rect", svg->find("stroke=\"#333\"")));
  EXPECT_LT(attribute(*svg, "y", label), frame_top);
  // A highlight outside the data widens the axis; a bad one is an error.
  plot.highlights[0].x = 100;
  EXPECT_TRUE(render_svg(plot).ok());
  plot.highlights[0].y = -1;
  EXPECT_EQ(render_svg(plot).status().message(),
            "highlight 0 (\"answer: 50B\") y: -1 cannot be drawn on a log axis");
}

TEST(SvgPlot, LongLegendLabelsAreCut) {
  Plot plot = loss_plot();
  plot.series[0].label = std::string(300, 'x');
  const std::string svg = render_svg(plot).value();
  EXPECT_NE(svg.find("...</text>"), std::string::npos);
  EXPECT_EQ(svg.find(std::string(300, 'x')), std::string::npos);
}

}  // namespace
}  // namespace llmplan::reports

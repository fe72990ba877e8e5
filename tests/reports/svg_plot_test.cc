#include "reports/svg_plot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace llmplan::reports {
namespace {

// Every opened element is closed, in order (a small well-formedness check).
bool balanced(const std::string& svg) {
  std::vector<std::string> stack;
  for (size_t open = svg.find('<'); open != std::string::npos; open = svg.find('<', open + 1)) {
    const size_t close = svg.find('>', open);
    if (close == std::string::npos) return false;
    const std::string tag = svg.substr(open + 1, close - open - 1);
    if (tag.empty() || tag.back() == '/') continue;  // self-closing
    const bool closing = tag[0] == '/';
    const std::string name =
        tag.substr(closing ? 1 : 0, tag.find_first_of(" \n") - (closing ? 1 : 0));
    if (closing) {
      if (stack.empty() || stack.back() != name) return false;
      stack.pop_back();
    } else {
      stack.push_back(name);
    }
  }
  return stack.empty();
}

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

}  // namespace
}  // namespace llmplan::reports

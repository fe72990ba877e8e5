#include "reports/scaling_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "reports/svg_plot.h"
#include "reports/table.h"

namespace llmplan::reports {
namespace {

// 6.53e10 -> "65.3 B"; for counts of parameters and tokens.
std::string with_unit(double count) {
  struct Unit {
    double scale;
    const char* name;
  };
  for (Unit u : {Unit{1e12, "T"}, Unit{1e9, "B"}, Unit{1e6, "M"}, Unit{1e3, "K"}}) {
    if (count >= u.scale) return fmt::format("{:.3g} {}", count / u.scale, u.name);
  }
  return fmt::format("{:.3g}", count);
}

std::string sci(double v) { return fmt::format("{:.4g}", v); }

std::string law_formula(const scaling::LossLaw& law) {
  return fmt::format("L = {:.5g} + {:.5g}/N^{:.5g} + {:.5g}/D^{:.5g}", law.E, law.A, law.alpha,
                     law.B, law.beta);
}

Table parameter_table(const scaling::ScalingFit& fit) {
  const scaling::BootstrapResult& boot = fit.bootstrap;
  const bool has_ci = boot.samples > 0;
  std::vector<std::string> header = {"parameter", "estimate"};
  if (has_ci) {
    header.push_back("std err");
    header.push_back(fmt::format("{:g}% CI", 100 * boot.confidence_level));
  }
  Table table(header);
  auto row = [&](const std::string& name, double value, const scaling::ConfidenceInterval& ci) {
    std::vector<std::string> cells = {name, fmt::format("{:.5g}", value)};
    if (has_ci) {
      cells.push_back(fmt::format("{:.3g}", ci.std_error));
      cells.push_back(fmt::format("[{:.5g}, {:.5g}]", ci.low, ci.high));
    }
    table.add_row(cells);
  };
  row("E", fit.law.E, boot.E);
  row("A", fit.law.A, boot.A);
  row("B", fit.law.B, boot.B);
  row("alpha", fit.law.alpha, boot.alpha);
  row("beta", fit.law.beta, boot.beta);
  row("a (N_opt ~ C^a)", fit.a, boot.a);
  row("b (D_opt ~ C^b)", fit.b, boot.b);
  return table;
}

// Summary lines shared by text and Markdown (without list markers).
std::vector<std::string> fit_facts(const scaling::ScalingFit& fit) {
  std::vector<std::string> facts;
  facts.push_back(fmt::format("objective: {:.7g} (sum of Huber losses, delta {:g}, on log loss)",
                              fit.objective, fit.huber_delta));
  facts.push_back(fmt::format(
      "converged: {} ({}); {} of {} polished starts converged, {} reached the best objective",
      fit.converged ? "yes" : "NO", fit.solver_report, fit.polished_converged, fit.starts_polished,
      fit.polished_at_best));
  facts.push_back(
      fmt::format("starts: {} screened, best {} polished; {} iterations for the winner; {:.2f} s",
                  fit.starts, fit.starts_polished, fit.iterations, fit.seconds));
  if (fit.bootstrap.samples > 0) {
    facts.push_back(
        fmt::format("bootstrap: {} resamples of the {} points (seed {}), {} failed to converge; "
                    "percentile intervals",
                    fit.bootstrap.samples, fit.n_points, fit.bootstrap.seed, fit.bootstrap.failed));
  }
  return facts;
}

std::vector<double> log_space(double lo, double hi, int n) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(std::pow(10.0, std::log10(lo) + (std::log10(hi) - std::log10(lo)) * i / (n - 1)));
  }
  return out;
}

}  // namespace

std::string fit_text(const FitReport& report) {
  const scaling::ScalingFit& fit = report.fit;
  std::string out =
      fmt::format("Fit of L(N, D) = E + A/N^alpha + B/D^beta to {} points\n", fit.n_points);
  if (!report.data_source.empty() || !report.data_description.empty()) {
    out += fmt::format("data: {}{}{}\n", report.data_source,
                       report.data_source.empty() || report.data_description.empty() ? "" : ": ",
                       report.data_description);
  }
  out += '\n';
  out += parameter_table(fit).text();
  out += '\n';
  for (const std::string& fact : fit_facts(fit)) out += fact + "\n";
  return out;
}

Result<std::string> fit_plot_svg(const FitReport& report) {
  Plot plot;
  plot.title = "Loss vs training compute";
  plot.x = {"training compute C = 6ND (FLOP)", true};
  plot.y = {"final loss", true};
  PlotSeries data{"runs", SeriesKind::kScatter, {}, {}, "", false};
  double c_lo = INFINITY, c_hi = 0;
  for (const scaling::LossPoint& p : report.points) {
    const double c = 6 * p.n_params * p.n_tokens;
    data.x.push_back(c);
    data.y.push_back(p.loss);
    c_lo = std::min(c_lo, c);
    c_hi = std::max(c_hi, c);
  }
  plot.series.push_back(std::move(data));
  const scaling::LossLaw& law = report.fit.law;
  if (!report.points.empty() && scaling::validate(law).ok()) {
    for (auto rule : {scaling::AllocationRule::kLaw, scaling::AllocationRule::kTokensPerParam20}) {
      PlotSeries frontier;
      frontier.label = rule == scaling::AllocationRule::kLaw ? "fitted compute-optimal frontier"
                                                             : "D = 20 N under the fitted law";
      frontier.dashed = rule != scaling::AllocationRule::kLaw;
      for (double c : log_space(c_lo / 3, c_hi * 3, 60)) {
        Result<scaling::Allocation> a = scaling::optimal_for_compute(law, c, rule);
        if (!a.ok()) return a.status();
        frontier.x.push_back(c);
        frontier.y.push_back(a->loss);
      }
      plot.series.push_back(std::move(frontier));
    }
  }
  if (std::isfinite(law.E) && law.E > 0) {
    plot.references.push_back(
        {ReferenceKind::kHorizontal, law.E, fmt::format("E = {:.4g} (irreducible loss)", law.E)});
  }
  return render_svg(plot);
}

Result<std::string> fit_markdown(const FitReport& report, const std::string& svg_link) {
  const scaling::ScalingFit& fit = report.fit;
  std::string out = "# Scaling-law fit\n\n";
  out += fmt::format("Fit of L(N, D) = E + A/N^α + B/D^β to {} points", fit.n_points);
  if (!report.data_source.empty()) out += fmt::format(" from `{}`", report.data_source);
  if (!report.data_description.empty()) out += fmt::format(" ({})", report.data_description);
  out += ".\n\n";
  out += parameter_table(fit).markdown() + "\n";
  for (const std::string& fact : fit_facts(fit)) out += "- " + fact + "\n";
  out += "\n## Loss vs compute\n\n";
  if (svg_link.empty()) {
    out += "The plot, fit.svg, is written beside fit.md by `llmplan fit ... --out DIR`.\n";
  } else {
    out += fmt::format("![Loss vs training compute with the fitted frontier]({})\n", svg_link);
  }
  return out;
}

std::string optimal_text(const OptimalReport& report) {
  const scaling::Allocation& a = report.allocation;
  Table t({"", ""});
  switch (report.query) {
    case OptimalQuery::kCompute:
      if (report.budget) {
        const scaling::GpuBudget& b = *report.budget;
        t.add_row(
            {"compute",
             fmt::format("{} FLOP = {:g} x {} ({:g} TFLOP/s peak) x {:g} days x MFU {:.2f}",
                         sci(a.flops), b.gpus, b.gpu, b.peak_flops_per_s / 1e12, b.days, b.mfu)});
      } else {
        t.add_row({"compute", sci(a.flops) + " FLOP"});
      }
      break;
    case OptimalQuery::kParams:
      t.add_row({"compute", fmt::format("{} FLOP (where N = {} is optimal)", sci(a.flops),
                                        with_unit(a.n_params))});
      break;
    case OptimalQuery::kTokens:
      t.add_row({"compute", fmt::format("{} FLOP (where D = {} tokens is optimal)", sci(a.flops),
                                        with_unit(a.n_tokens))});
      break;
  }
  t.add_row({"law", fmt::format("{}: {}", report.law.name, law_formula(report.law))});
  if (!report.law.source.empty()) t.add_row({"law source", report.law.source});
  t.add_row({"rule", a.rule == scaling::AllocationRule::kLaw
                         ? "law (minimise L(N, D) subject to C = 6ND, closed form)"
                         : "chinchilla-20 (D = 20 N, N = sqrt(C/120))"});
  std::string n = fmt::format("{} parameters ({})", sci(a.n_params), with_unit(a.n_params));
  if (a.limited_by_params)
    n += fmt::format(" -- capped by max params {}", sci(report.limits.max_params));
  std::string d = fmt::format("{} tokens ({})", sci(a.n_tokens), with_unit(a.n_tokens));
  if (a.limited_by_tokens)
    d += fmt::format(" -- capped by max tokens {}", sci(report.limits.max_tokens));
  t.add_row({"N_opt", n});
  t.add_row({"D_opt", d});
  t.add_row({"tokens/param", fmt::format("{:.1f}", a.tokens_per_param())});
  t.add_row({"predicted loss", fmt::format("{:.4f}", a.loss)});
  for (const std::string& line : report.assumptions) t.add_row({"assumption", line});
  // Drop the (empty) header line of the two-column table.
  std::string text = t.text();
  return text.substr(text.find('\n') + 1);
}

}  // namespace llmplan::reports

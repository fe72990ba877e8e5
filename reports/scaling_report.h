// Human-readable reports of scaling results: `llmplan fit` (text, Markdown
// with a loss-vs-compute plot) and `llmplan optimal` (text). Pure functions
// of their inputs; thread-safe.
#ifndef LLMPLAN_REPORTS_SCALING_REPORT_H_
#define LLMPLAN_REPORTS_SCALING_REPORT_H_

#include <optional>
#include <string>
#include <vector>

#include "scaling/fit.h"
#include "scaling/law.h"
#include "scaling/optimal.h"
#include "base/status.h"

namespace llmplan::reports {

// A fit and the data it was made from.
struct FitReport {
  scaling::ScalingFit fit;
  std::vector<scaling::LossPoint> points;
  std::string data_source;       // e.g. the CSV path
  std::string data_description;  // e.g. scaling::describe(LossData)
};

// Parameter table (with bootstrap standard errors and intervals when
// present), objective, convergence, frontier exponents, starts and time.
std::string fit_text(const FitReport& report);

// The same as Markdown, followed by an image link to the loss-vs-compute plot
// `svg_link` (written beside the Markdown), or, when `svg_link` is empty, a
// line saying that --out DIR writes it. Never inline SVG. Errors: none today
// (a Result so that a future check need not change callers).
Result<std::string> fit_markdown(const FitReport& report, const std::string& svg_link);

// Loss vs training compute C = 6ND on log-log axes: the data points, the
// fitted law's compute-optimal frontier L(N_opt(C), D_opt(C)), the frontier
// of the 20-tokens-per-parameter rule under the same law, and E as a
// horizontal line. (Frontiers are left out when the fitted law is not valid,
// e.g. a negative exponent.) InvalidArgument if there is nothing to draw.
Result<std::string> fit_plot_svg(const FitReport& report);

// What `llmplan optimal` was asked: a compute budget (given in FLOPs or as a
// GPU budget), or the frontier point for a fixed model size or token count.
enum class OptimalQuery { kCompute, kParams, kTokens };

struct OptimalReport {
  OptimalQuery query = OptimalQuery::kCompute;
  scaling::Allocation allocation;
  scaling::LossLaw law;
  std::optional<scaling::GpuBudget> budget;  // when the budget came from GPUs x days
  std::string cluster;                       // the budget's cluster preset, if any
  scaling::AllocationLimits limits;
  std::vector<std::string> assumptions;      // defaults and choices, one line each
};

// "key: value" lines: budget, law, rule, N, D, tokens per parameter, loss,
// then one "assumption" line per entry of report.assumptions.
std::string optimal_text(const OptimalReport& report);

}  // namespace llmplan::reports

#endif  // LLMPLAN_REPORTS_SCALING_REPORT_H_

// validate's report on vTrain's measured CSV (validation_report.h).
#include "planner/accuracy/validation_report.h"

#include <cmath>
#include <cstdio>

#include "reports/svg_plot.h"
#include "reports/table.h"

namespace llmplan::planner {
namespace {

// The error by grouping `g`: one row per group.
reports::Table group_table(const std::vector<AccuracyCase>& cases,
                           const std::vector<double>& predicted, Grouping g) {
  reports::Table t({to_string(g), "rows", "MAPE", "median", "max", "bias"});
  for (const GroupError& e : group_errors(cases, predicted, g)) {
    t.add_row({e.key, std::to_string(e.error.rows), percent_text(e.error.mape),
               percent_text(e.error.median_ape), percent_text(e.error.max_ape),
               percent_text(e.error.mean_signed)});
  }
  return t;
}

constexpr Grouping kGroupings[] = {Grouping::kGpus,  Grouping::kModel,  Grouping::kPlan,
                                   Grouping::kMicroBatch, Grouping::kHidden, Grouping::kTensor,
                                   Grouping::kData,  Grouping::kPipeline};

}  // namespace

Result<std::string> validation_csv(const std::vector<AccuracyCase>& cases,
                                   const std::vector<double>& pred) {
  reports::Table t({"line", "gpus", "global_batch", "micro_batch", "hidden", "heads", "layers",
                    "seq", "t", "d", "p", "measured_ms", "predicted_ms", "ape_percent"});
  for (size_t i = 0; i < cases.size(); ++i) {
    const MeasuredRun& r = cases[i].run;
    char m[32], p[32], e[32];
    std::snprintf(m, sizeof m, "%.3f", r.iteration_time_s * 1e3);
    std::snprintf(p, sizeof p, "%.3f", pred[i] * 1e3);
    std::snprintf(e, sizeof e, "%.3f",
                  100 * std::abs(pred[i] - r.iteration_time_s) / r.iteration_time_s);
    t.add_row({std::to_string(r.line), std::to_string(r.num_gpus), std::to_string(r.global_batch),
               std::to_string(r.micro_batch), std::to_string(r.hidden_size),
               std::to_string(r.num_heads), std::to_string(r.num_layers),
               std::to_string(r.seq_length), std::to_string(r.tensor), std::to_string(r.data),
               std::to_string(r.pipeline), m, p, e});
  }
  return t.csv();
}

Result<std::string> validation_plot_svg(const std::vector<double>& meas,
                                        const std::vector<double>& pred) {
  reports::Plot plot;
  plot.title = "Predicted vs measured iteration time";
  plot.x = {"measured (s)", true};
  plot.y = {"predicted (s)", true};
  plot.series.push_back({"runs", reports::SeriesKind::kScatter, meas, pred, "", false});
  plot.references.push_back({reports::ReferenceKind::kIdentity, 0, "y = x"});
  return reports::render_svg(plot);
}

std::string validation_report(const std::string& source, const std::string& gpu_name,
                              const std::vector<AccuracyCase>& cases,
                              const std::vector<double>& pred,
                              const std::vector<std::string>& notes, bool md,
                              const std::string& plot_link) {
  const ErrorSummary s = summarise(pred, measured_of(cases));
  std::string out = md ? "# Validation: " + source + "\n\n" : "validation: " + source + "\n";
  const std::string item = md ? "- " : "  ";
  out += item + "GPU: " + gpu_name + "\n";
  out += item + "rows: " + std::to_string(s.rows) + "\n";
  out += item + "MAPE: " + percent_text(s.mape) + "\n";
  out += item + "median APE: " + percent_text(s.median_ape) + "\n";
  out += item + "max APE: " + percent_text(s.max_ape) + "\n";
  out += item + "mean signed error: " + percent_text(s.mean_signed) + "\n\n";
  if (md) {
    out += plot_link.empty()
               ? std::string("The plot of predicted vs measured times, ") + kValidatePlot +
                     ", is written beside report.md by `llmplan validate ... --out DIR`.\n\n"
               : "![Predicted vs measured iteration time](" + plot_link + ")\n\n";
  }
  for (Grouping g : kGroupings) {
    const reports::Table t = group_table(cases, pred, g);
    out += md ? "## Error by " + std::string(to_string(g)) + "\n\n" + t.markdown() + "\n"
              : "error by " + std::string(to_string(g)) + ":\n" + t.text() + "\n";
  }
  for (const std::string& n : notes) out += (md ? "- note: " : "note: ") + n + "\n";
  return out;
}

}  // namespace llmplan::planner

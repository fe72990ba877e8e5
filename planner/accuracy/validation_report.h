// The report `llmplan validate` prints for vTrain's measured CSV
// (measured_csv.h): the error summary and the error by each grouping, as
// text or Markdown, the per-row CSV, and the predicted-vs-measured plot
// (also written for runs files, whose report is runs_report.h). Pure
// formatting of cases and predictions; thread-safe.
#ifndef LLMPLAN_PLANNER_ACCURACY_VALIDATION_REPORT_H_
#define LLMPLAN_PLANNER_ACCURACY_VALIDATION_REPORT_H_

#include <string>
#include <vector>

#include "base/status.h"
#include "planner/accuracy/accuracy.h"

namespace llmplan::planner {

// The file name of validate's plot, written beside report.md by --out.
inline constexpr const char* kValidatePlot = "predicted_vs_measured.svg";

// One row per case: the run's line and shape, measured and predicted
// milliseconds and the absolute percentage error (3 decimals).
// REQUIRES: pred.size() == cases.size().
Result<std::string> validation_csv(const std::vector<AccuracyCase>& cases,
                                   const std::vector<double>& pred);

// The SVG scatter of predicted against measured iteration times (log
// axes, the identity line).
Result<std::string> validation_plot_svg(const std::vector<double>& meas,
                                        const std::vector<double>& pred);

// The text (`md` false) or Markdown report of `source` on `gpu_name`, with
// `notes` at the end. Markdown links the plot when `plot_link` is set (the
// file beside it), else says that --out writes it.
std::string validation_report(const std::string& source, const std::string& gpu_name,
                              const std::vector<AccuracyCase>& cases,
                              const std::vector<double>& pred,
                              const std::vector<std::string>& notes, bool md,
                              const std::string& plot_link);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_ACCURACY_VALIDATION_REPORT_H_

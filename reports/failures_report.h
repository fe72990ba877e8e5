// The failures part of a report (issue 28): compute vs wall-clock days,
// expected interruptions, goodput, the checkpoint interval, time lost by
// cause and the Monte Carlo P10-P90 of wall days, as Markdown, CSV cells and
// JSON. Pure functions of the tables the planner fills (failures_table.h)
// and of the interruption figures they were computed with
// (presets/interruptions.h).
#ifndef LLMPLAN_REPORTS_FAILURES_REPORT_H_
#define LLMPLAN_REPORTS_FAILURES_REPORT_H_

#include <boost/json/fwd.hpp>
#include <string>
#include <vector>

#include "presets/interruptions.h"
#include "reports/failures_table.h"

namespace llmplan::reports {

// The assumptions bullet ("" when `rel` is disabled): the rate per GPU-day
// of `gpus_per_node`-GPU nodes, the checkpoint figures, and whether the
// rates are carried over from H100 for `gpu_name`.
std::string failures_assumption_line(const presets::Reliability& rel, int gpus_per_node,
                                     const std::string& gpu_name);

// The "## Failures, checkpoints and goodput" section of an answer that runs
// on `gpus_used` GPUs; `d` with trials 0 leaves the Monte Carlo out.
std::string failures_markdown(const Goodput& g, const WallDistribution& d,
                              const presets::Reliability& rel, int gpus_used);

// The CSV columns (compute_days, wall_days, expected_interruptions, goodput,
// checkpoint_interval_s) and a candidate's cells (all empty without a plan:
// g null).
std::vector<std::string> failure_csv_header();
std::vector<std::string> failure_csv_cells(double compute_days, const Goodput* g);

// Adds compute_days, wall_days, expected_interruptions, goodput and
// checkpoint_interval_s to a candidate's JSON object.
void add_failure_fields_json(double compute_days, const Goodput& g, boost::json::object* o);

// The "failures" object of result.json (and of `simulate --format json`):
// rates, checkpoint figures, time lost by cause and the Monte Carlo (null
// when distribution.trials is 0).
boost::json::object failures_detail_json(const Goodput& g, const presets::Reliability& rel,
                                         int gpus_per_node, const WallDistribution& distribution);

// `llmplan simulate`'s failure part, per day of compute (the run has no
// tokens): one day of compute becomes wall_days; the text lines and the
// JSON object ("failures": per_compute_day, wall_days, expected_interruptions,
// goodput, checkpoint_interval_s and failures_detail_json's keys).
std::string failures_per_day_text(const Goodput& g, const presets::Reliability& rel);
boost::json::object failures_per_day_json(const Goodput& g, const presets::Reliability& rel,
                                          int gpus_per_node);

}  // namespace llmplan::reports

#endif  // LLMPLAN_REPORTS_FAILURES_REPORT_H_

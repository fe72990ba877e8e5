// The planner report's failures part (issue 28): compute vs wall-clock days,
// expected interruptions, goodput, the checkpoint interval, time lost by
// cause and the Monte Carlo P10-P90 of wall days, for the Markdown report,
// result.json and the CSVs. Every function is empty (or returns nothing)
// when the search ran without the failure model (--no-interruptions), so
// that output stays as it was before issue 28. Pure.
#ifndef LLMPLAN_PLANNER_REPORT_FAILURES_REPORT_H_
#define LLMPLAN_PLANNER_REPORT_FAILURES_REPORT_H_

#include <boost/json/fwd.hpp>
#include <string>
#include <vector>

#include "planner/report/plan_report.h"
#include "planner/search/reliability.h"

namespace llmplan::planner {

// The failure breakdown of candidate `c`'s best plan (REQUIRES: it has one),
// and the Monte Carlo when `distribution` is set (combined with the plan's
// error band).
struct FailureSummary {
  Goodput goodput;
  WallDistribution distribution;
};
FailureSummary failure_summary(const PlanReportView& v, const Candidate& c, const PlanResult& p,
                               bool distribution);

// The "## Failures, checkpoints and goodput" section of the answer ("" when
// disabled or no answer).
std::string failures_markdown(const PlanReportView& v);
// The assumptions bullet ("" when disabled).
std::string failures_assumption_line(const PlanReportView& v);

// The CSV columns (compute_days, wall_days, expected_interruptions, goodput,
// checkpoint_interval_s) and a candidate's cells ("" without a plan); both
// empty when disabled.
std::vector<std::string> failure_csv_header(const PlanReportView& v);
std::vector<std::string> failure_csv_cells(const PlanReportView& v, const Candidate& c);

// Adds compute_days, wall_days, expected_interruptions, goodput and
// checkpoint_interval_s to a candidate's JSON object, and with `detail`
// a "failures" object (cause breakdown, checkpoint figures, Monte Carlo).
// Nothing when disabled or without a plan.
void add_failures_json(const PlanReportView& v, const SearchResult& r, const Candidate& c,
                       bool detail, boost::json::object* o);

// The "failures" object of result.json (and of `simulate --format json`):
// rates, checkpoint figures, time lost by cause and the Monte Carlo (null
// when distribution.trials is 0).
boost::json::object failures_detail_json(const Goodput& g, const Reliability& rel, int gpus_per_node,
                                         const WallDistribution& distribution);

// `llmplan simulate`'s failure part, per day of compute (the run has no
// tokens): one day of compute becomes wall_days; the text lines and the
// JSON object ("failures": per_compute_day, wall_days, expected_interruptions,
// goodput, checkpoint_interval_s and failures_detail_json's keys).
std::string failures_per_day_text(const Goodput& g, const Reliability& rel);
boost::json::object failures_per_day_json(const Goodput& g, const Reliability& rel, int gpus_per_node);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_REPORT_FAILURES_REPORT_H_

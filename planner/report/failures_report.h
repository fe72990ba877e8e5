// The planner report's failures part (issue 28): the search's plans' failure
// figures (planner/search/reliability.h: goodput, monte_carlo) filled into
// the tables reports/failures_table.h defines, written by
// reports/failures_report.h. Every function is empty (or returns nothing)
// when the search ran without the failure model (--no-interruptions), so
// that output stays as it was before issue 28. Pure.
#ifndef LLMPLAN_PLANNER_REPORT_FAILURES_REPORT_H_
#define LLMPLAN_PLANNER_REPORT_FAILURES_REPORT_H_

#include <boost/json/fwd.hpp>
#include <string>
#include <vector>

#include "planner/report/plan_report.h"
#include "planner/search/reliability.h"
#include "reports/failures_report.h"

namespace llmplan::planner {

// `llmplan simulate`'s writers, by their planner names.
using reports::failures_detail_json;
using reports::failures_per_day_json;
using reports::failures_per_day_text;

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

// The CSV columns (reports::failure_csv_header) and a candidate's cells
// ("" without a plan); both empty when disabled.
std::vector<std::string> failure_csv_header(const PlanReportView& v);
std::vector<std::string> failure_csv_cells(const PlanReportView& v, const Candidate& c);

// Adds compute_days, wall_days, expected_interruptions, goodput and
// checkpoint_interval_s to a candidate's JSON object, and with `detail`
// a "failures" object (cause breakdown, checkpoint figures, Monte Carlo).
// Nothing when disabled or without a plan.
void add_failures_json(const PlanReportView& v, const SearchResult& r, const Candidate& c,
                       bool detail, boost::json::object* o);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_REPORT_FAILURES_REPORT_H_

// The planner's report as the tables reports/plan_report_table.h defines:
// a search's candidates and plans with the figures the report shows beyond
// the search's own (each plan's days for its model's tokens, the bands, the
// loss intervals and verdicts, the failure figures and the answer's Monte
// Carlo, the Pareto front). reports/plan_report.h and plan_report_json.h
// write them. Pure.
#ifndef LLMPLAN_PLANNER_SEARCH_REPORT_TABLES_H_
#define LLMPLAN_PLANNER_SEARCH_REPORT_TABLES_H_

#include <string>
#include <vector>

#include "planner/search/search_types.h"
#include "reports/plan_report_table.h"
#include "simulator/caveats.h"
#include "simulator/cluster.h"
#include "simulator/simulate.h"

namespace llmplan::planner {

// A search and what the report adds to it.
struct PlanReportView {
  const simulator::Cluster& cluster;
  const SearchOptions& options;
  const SearchResult& result;
  std::string law_name;
  std::vector<std::string> notes;
  // The answer's plan simulated again in full (time and memory breakdown);
  // null when there is no answer.
  const simulator::StepReport* best_report = nullptr;
  // Caveats on the answer (plausibility, calibration: simulator/caveats.h).
  std::vector<simulator::Caveat> caveats;
  // How the planner was invoked (argv, for the report and result.json).
  std::vector<std::string> command_line;
  // SVG files written beside the report (--out): linked from the Markdown.
  bool plots_written = false;
  // --family moe: the dense (llama family) search for the same budget, for
  // the comparison table; null otherwise.
  const SearchOptions* dense_options = nullptr;
  const SearchResult* dense_result = nullptr;
};

// The report's tables of `v`. The answer's Monte Carlo of wall time runs
// here, once.
reports::PlanReport plan_report_tables(const PlanReportView& v);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_SEARCH_REPORT_TABLES_H_

// The planner's report: Markdown, CSV tables of candidates and plans, JSON,
// and SVG plots (days vs parameters with the deadline; the time-cost Pareto
// front of the chosen model's plans). Pure functions of the search result.
#ifndef LLMPLAN_PLANNER_PLAN_REPORT_H_
#define LLMPLAN_PLANNER_PLAN_REPORT_H_

#include <string>
#include <vector>

#include "planner/search.h"
#include "simulator/cluster.h"

namespace llmplan::planner {

struct PlanReportView {
  const simulator::Cluster& cluster;
  const SearchOptions& options;
  const SearchResult& result;
  std::string law_name;
  std::vector<std::string> notes;
};

// "t8 p4 d105 b1 B2100 v2 full SP ZeRO-1".
std::string plan_label(const simulator::Plan& plan);
std::string plan_report_markdown(const PlanReportView& v);
std::string candidates_csv(const PlanReportView& v);
std::string plans_csv(const PlanReportView& v);
// Indices into result.plans of the time-cost Pareto front of the best
// candidate's fitting plans (its tokens), sorted by time.
std::vector<int> best_pareto(const PlanReportView& v);
std::string days_vs_params_svg(const PlanReportView& v);
std::string pareto_svg(const PlanReportView& v);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_PLAN_REPORT_H_

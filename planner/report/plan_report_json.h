// The planner's result as JSON: best {params, tokens, layers, hidden, heads,
// plan, days, mfu, cost_usd, loss} (null when no model is feasible), naive
// {params, tokens, simulated_days}, candidates_evaluated, plans_evaluated.
#ifndef LLMPLAN_PLANNER_REPORT_PLAN_REPORT_JSON_H_
#define LLMPLAN_PLANNER_REPORT_PLAN_REPORT_JSON_H_

#include <boost/json.hpp>

#include "planner/report/plan_report.h"

namespace llmplan::planner {

boost::json::object plan_report_to_json(const PlanReportView& v);

// --cost-model owned: the owned cost's numbers and their sources
// (capex_usd_per_gpu, amortisation_years, pue, usd_per_kwh, tdp_w,
// non_gpu_power_share, it_power_w, capex_usd_per_gpu_hour,
// power_usd_per_gpu_hour, cloud_usd_per_gpu_hour, sources); null for cloud.
boost::json::value ownership_json(const Pricing& p);

// result.json's "training_objective" (present when --tokens, --unique-tokens
// or --inference-tokens is given): the objective's inputs and the answer's
// numbers under it. Implemented in plan_report_objective.cc.
boost::json::object training_objective_json(const PlanReportView& v);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_REPORT_PLAN_REPORT_JSON_H_

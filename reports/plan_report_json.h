// The planner's result as JSON (result.json, documented by
// reports/schema/result.schema.json): best (null when no model is feasible),
// naive, candidates, pruning, the assumptions, the Pareto front. Pure
// functions of the tables the planner fills (plan_report_table.h).
#ifndef LLMPLAN_REPORTS_PLAN_REPORT_JSON_H_
#define LLMPLAN_REPORTS_PLAN_REPORT_JSON_H_

#include <boost/json.hpp>

#include "reports/plan_report.h"

namespace llmplan::reports {

boost::json::object plan_report_to_json(const PlanReport& v);

// --cost-model owned: the owned cost's numbers and their sources
// (capex_usd_per_gpu, amortisation_years, pue, usd_per_kwh, tdp_w,
// non_gpu_power_share, it_power_w, capex_usd_per_gpu_hour,
// power_usd_per_gpu_hour, cloud_usd_per_gpu_hour, sources); null for cloud.
boost::json::value ownership_json(const presets::Pricing& p);

// result.json's "training_objective" (present when --tokens, --unique-tokens
// or --inference-tokens is given): the objective's inputs and the answer's
// numbers under it. Implemented in plan_report_objective.cc.
boost::json::object training_objective_json(const PlanReport& v);

}  // namespace llmplan::reports

#endif  // LLMPLAN_REPORTS_PLAN_REPORT_JSON_H_

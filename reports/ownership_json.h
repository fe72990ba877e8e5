// The JSON of the owned-cost figures (presets/ownership.h), as the
// planner's result.json and the frontier's frontier.json write them.
#ifndef LLMPLAN_REPORTS_OWNERSHIP_JSON_H_
#define LLMPLAN_REPORTS_OWNERSHIP_JSON_H_

#include <boost/json.hpp>

#include "presets/ownership.h"

namespace llmplan::reports {

// Adds the figures' numbers to *w in this order: capex_usd_per_gpu,
// amortisation_years, pue, usd_per_kwh, tdp_w, non_gpu_power_share,
// it_power_w, capex_usd_per_gpu_hour, power_usd_per_gpu_hour.
void add_owned_cost_numbers(const presets::OwnedCost& c, boost::json::object* w);

// Their sources: {"capex", "amortisation_years", "pue", "usd_per_kwh", "power"}.
boost::json::object owned_cost_sources(const presets::OwnedCost& c);

}  // namespace llmplan::reports

#endif  // LLMPLAN_REPORTS_OWNERSHIP_JSON_H_

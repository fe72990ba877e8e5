#include "reports/ownership_json.h"

namespace llmplan::reports {

void add_owned_cost_numbers(const presets::OwnedCost& c, boost::json::object* w) {
  (*w)["capex_usd_per_gpu"] = c.capex_usd_per_gpu;
  (*w)["amortisation_years"] = c.amortisation_years;
  (*w)["pue"] = c.pue;
  (*w)["usd_per_kwh"] = c.usd_per_kwh;
  (*w)["tdp_w"] = c.tdp_w;
  (*w)["non_gpu_power_share"] = c.non_gpu_power_share;
  (*w)["it_power_w"] = c.it_power_w;
  (*w)["capex_usd_per_gpu_hour"] = c.capex_usd_per_gpu_hour;
  (*w)["power_usd_per_gpu_hour"] = c.power_usd_per_gpu_hour;
}

boost::json::object owned_cost_sources(const presets::OwnedCost& c) {
  boost::json::object src;
  src["capex"] = c.capex_source;
  src["amortisation_years"] = c.years_source;
  src["pue"] = c.pue_source;
  src["usd_per_kwh"] = c.kwh_source;
  src["power"] = c.power_source;
  return src;
}

}  // namespace llmplan::reports

#include "planner/search/pricing.h"

#include <algorithm>
#include <cmath>

namespace llmplan::planner {
namespace {

Status check_flag(const char* flag, double x, double min, bool min_open, double max,
                  const char* what) {
  if (x == 0) return Status();  // not given
  if (!std::isfinite(x) || (min_open ? !(x > min) : !(x >= min)) || x > max) {
    return Status::usage(std::string(flag) + ": must be " + what + ", got " +
                         (std::isfinite(x) ? std::to_string(x) : std::string("a non-finite value")));
  }
  return Status();
}

}  // namespace

Status check_overrides(const OwnershipOverrides& o) {
  LLMPLAN_RETURN_IF_ERROR(check_flag("--capex-usd-per-gpu", o.capex_usd_per_gpu, 0, true,
                                     presets::kMaxCapexUsdPerGpu, "a dollar amount > 0 and <= 1e7"));
  LLMPLAN_RETURN_IF_ERROR(check_flag("--amortisation-years", o.amortisation_years, 0, true,
                                     presets::kMaxAmortisationYears, "a number of years > 0 and <= 30"));
  LLMPLAN_RETURN_IF_ERROR(check_flag("--pue", o.pue, 1, false, presets::kMaxPue, "between 1 and 5"));
  LLMPLAN_RETURN_IF_ERROR(check_flag("--usd-per-kwh", o.usd_per_kwh, 0, true, presets::kMaxUsdPerKwh,
                                     "a price > 0 and <= 10 dollars per kWh"));
  return Status();
}

OwnedCost owned_cost(double capex_usd_per_gpu, double amortisation_years, double pue,
                     double usd_per_kwh, double tdp_w, double non_gpu_power_share) {
  OwnedCost c;
  c.capex_usd_per_gpu = capex_usd_per_gpu;
  c.amortisation_years = amortisation_years;
  c.pue = pue;
  c.usd_per_kwh = usd_per_kwh;
  c.tdp_w = tdp_w;
  c.non_gpu_power_share = non_gpu_power_share;
  c.it_power_w = tdp_w * (1.0 + non_gpu_power_share);
  c.capex_usd_per_gpu_hour = capex_usd_per_gpu / (amortisation_years * kHoursPerYear);
  c.power_usd_per_gpu_hour = c.it_power_w / 1000.0 * pue * usd_per_kwh;
  c.usd_per_gpu_hour = c.capex_usd_per_gpu_hour + c.power_usd_per_gpu_hour;
  return c;
}

Result<OwnedCost> resolve_owned_cost(const OwnershipFile& file, const simulator::GpuSpec& gpu,
                                     const OwnershipOverrides& overrides) {
  LLMPLAN_RETURN_IF_ERROR(check_overrides(overrides));
  if (!(gpu.tdp_w > 0)) {
    return Status::usage("--cost-model owned: GPU " + gpu.name +
                         " has no tdp_w (power) in its preset");
  }
  const OwnershipGpu* entry = file.find(gpu.name);
  if (entry == nullptr && overrides.capex_usd_per_gpu == 0) {
    return Status::usage("--cost-model owned: no capex for GPU " + gpu.name +
                         " in presets/ownership.json; give --capex-usd-per-gpu");
  }
  double share = file.non_gpu_power_share.value;
  std::string power_source =
      "TDP " + std::to_string(static_cast<long>(gpu.tdp_w)) + " W (GPU preset) x (1 + " +
      "default non-GPU share: " + file.non_gpu_power_share.source + ")";
  if (entry != nullptr) {
    const double per_gpu_w = entry->system_power_w.value / entry->system_gpus.value;
    share = std::max(0.0, per_gpu_w / gpu.tdp_w - 1.0);
    power_source = "system power " + entry->system_power_w.source + " / " +
                   std::to_string(static_cast<long>(entry->system_gpus.value)) +
                   " GPUs, against the preset's TDP " +
                   std::to_string(static_cast<long>(gpu.tdp_w)) + " W";
  }
  const double capex =
      overrides.capex_usd_per_gpu > 0 ? overrides.capex_usd_per_gpu : entry->capex_usd_per_gpu.value;
  const double years = overrides.amortisation_years > 0 ? overrides.amortisation_years
                                                        : file.amortisation_years.value;
  const double pue = overrides.pue > 0 ? overrides.pue : file.pue.value;
  const double kwh = overrides.usd_per_kwh > 0 ? overrides.usd_per_kwh : file.usd_per_kwh.value;
  OwnedCost c = owned_cost(capex, years, pue, kwh, gpu.tdp_w, share);
  c.capex_source = overrides.capex_usd_per_gpu > 0 ? "--capex-usd-per-gpu"
                                                   : entry->capex_usd_per_gpu.source;
  c.years_source =
      overrides.amortisation_years > 0 ? "--amortisation-years" : file.amortisation_years.source;
  c.pue_source = overrides.pue > 0 ? "--pue" : file.pue.source;
  c.kwh_source = overrides.usd_per_kwh > 0 ? "--usd-per-kwh" : file.usd_per_kwh.source;
  c.power_source = power_source;
  return c;
}

Result<Pricing> make_pricing(const std::string& model, bool stated,
                             const simulator::Cluster& cluster, const OwnershipFile& file,
                             const OwnershipOverrides& overrides) {
  Pricing p;
  p.model = model;
  p.stated = stated;
  p.cloud_usd_per_gpu_hour = cluster.usd_per_gpu_hour;
  if (model == "owned") {
    LLMPLAN_ASSIGN_OR_RETURN(p.owned, resolve_owned_cost(file, cluster.gpu, overrides));
  } else if (model != "cloud") {
    return Status::usage("--cost-model: unknown model '" + model + "' (expected cloud or owned)");
  }
  return p;
}

}  // namespace llmplan::planner

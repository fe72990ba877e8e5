// What one GPU-hour costs (--cost-model): the cloud price of the cluster
// preset (its price preset, presets/prices.json), or the cost of owning the
// GPU (presets/ownership.json):
//
//   owned $/GPU-h = capex per GPU / (amortisation years x 8,766 h)
//                 + IT power per GPU (kW) x PUE x $/kWh
//
// IT power per GPU = the GPU's TDP x (1 + non-GPU share), the share being
// that of its system's datasheet maximum power (system power / (GPUs x TDP)
// - 1: CPUs, NICs, switches, fans, PSU losses). Every hour of the
// amortisation period is charged (100 % allocation, as a reservation is);
// datacentre space, staff, scale-out network and storage are not included
// (ownership.json's note), so the owned figure is a floor.
#ifndef LLMPLAN_PLANNER_SEARCH_PRICING_H_
#define LLMPLAN_PLANNER_SEARCH_PRICING_H_

#include <string>
#include <string_view>
#include <vector>

#include "presets/ownership.h"
#include "simulator/cluster.h"
#include "base/status.h"

namespace llmplan::planner {

// 365.25 days x 24 h: the hours of an average (Julian) year.
inline constexpr double kHoursPerYear = 8766.0;

// The ownership file and the owned-cost figures (presets/ownership.h), by
// their planner names.
using presets::builtin_ownership;
using presets::OwnedCost;
using presets::OwnershipFile;
using presets::OwnershipGpu;
using presets::parse_ownership;
using presets::Sourced;

// The --capex-usd-per-gpu, --amortisation-years, --pue and --usd-per-kwh
// flags; 0: the file's default.
struct OwnershipOverrides {
  double capex_usd_per_gpu = 0;
  double amortisation_years = 0;
  double pue = 0;
  double usd_per_kwh = 0;
};

// InvalidArgument (a usage error) naming the flag for a value that is not
// finite, <= 0, or absurd: capex above $10 million per GPU, more than 30
// years, PUE below 1 or above 5, more than $10 per kWh. 0 means "not given"
// and passes.
Status check_overrides(const OwnershipOverrides& o);

// The formula above, pure. Inputs must be finite, capex and years > 0.
OwnedCost owned_cost(double capex_usd_per_gpu, double amortisation_years, double pue,
                     double usd_per_kwh, double tdp_w, double non_gpu_power_share);

// The owned cost of `gpu` from the file's entry for it and the overrides
// (which win, their source then reads "--flag"). Errors (usage) when the GPU
// has no entry and no --capex-usd-per-gpu is given, or it has no tdp_w.
Result<OwnedCost> resolve_owned_cost(const OwnershipFile& file, const simulator::GpuSpec& gpu,
                                     const OwnershipOverrides& overrides);

// How the planner prices a GPU-hour (presets/ownership.h).
using presets::Pricing;

// The pricing of `cluster` under `model` ("cloud" or "owned"); errors as
// resolve_owned_cost's, and InvalidArgument for another model name.
Result<Pricing> make_pricing(const std::string& model, bool stated,
                             const simulator::Cluster& cluster, const OwnershipFile& file,
                             const OwnershipOverrides& overrides);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_SEARCH_PRICING_H_

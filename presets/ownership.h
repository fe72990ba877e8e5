// presets/ownership.json: what owning a GPU costs (its system's price per
// GPU and power, the amortisation period, PUE and electricity price, every
// number with its source), the reader of that file, and the owned-cost
// figures the pricing (planner/search/pricing.h) computes from it and the
// reports print. Plain values; the formula is pricing.h's.
#ifndef LLMPLAN_PRESETS_OWNERSHIP_H_
#define LLMPLAN_PRESETS_OWNERSHIP_H_

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace llmplan::presets {

// Bounds of the file's numbers, which the flags that override them share
// (planner/search/pricing.h's check_overrides).
inline constexpr double kMaxCapexUsdPerGpu = 1e7;
inline constexpr double kMaxAmortisationYears = 30;
inline constexpr double kMaxPue = 5;
inline constexpr double kMaxUsdPerKwh = 10;

// A number of ownership.json with its source.
struct Sourced {
  double value = 0;
  std::string source;
};

// One GPU's entry: its all-in system price per GPU and its system's power.
struct OwnershipGpu {
  std::string gpu;  // GPU preset name; need not exist as a GPU preset
  Sourced capex_usd_per_gpu;
  Sourced system_power_w;
  Sourced system_gpus;
};

// presets/ownership.json.
struct OwnershipFile {
  Sourced amortisation_years;
  Sourced pue;
  Sourced usd_per_kwh;
  Sourced non_gpu_power_share;  // for a GPU without an entry
  std::vector<OwnershipGpu> gpus;
  // The entry of `gpu`, or null.
  const OwnershipGpu* find(std::string_view gpu) const;
};

// Parses an ownership file; errors name `source_name` and the field. Every
// number must be finite and within bounds (capex, years, PUE >= 1, $/kWh,
// power, GPUs > 0; share >= 0); GPU names unique. Thread-safe.
Result<OwnershipFile> parse_ownership(std::string_view text, const std::string& source_name);
// The built-in presets/ownership.json (embedded); Internal if it is broken.
Result<OwnershipFile> builtin_ownership();

// The owned cost of one GPU-hour, every number it used, with sources.
struct OwnedCost {
  double capex_usd_per_gpu = 0;
  double amortisation_years = 0;
  double pue = 0;
  double usd_per_kwh = 0;
  double tdp_w = 0;
  double non_gpu_power_share = 0;
  double it_power_w = 0;                // tdp_w x (1 + non_gpu_power_share)
  double capex_usd_per_gpu_hour = 0;    // capex / (years x kHoursPerYear)
  double power_usd_per_gpu_hour = 0;    // it_power_w / 1000 x pue x usd_per_kwh
  double usd_per_gpu_hour = 0;          // the sum
  std::string capex_source, years_source, pue_source, kwh_source, power_source;
};

// How the planner prices a GPU-hour: the cloud price of the cluster or the
// owned cost above (planner/search/pricing.h makes it; the reports name it).
struct Pricing {
  std::string model = "cloud";  // "cloud" or "owned"
  bool stated = false;          // --cost-model was given: the reports name the model
  double cloud_usd_per_gpu_hour = 0;  // the cluster's price preset (0: unknown)
  OwnedCost owned;                    // meaningful when model == "owned"
  double usd_per_gpu_hour() const {
    return model == "owned" ? owned.usd_per_gpu_hour : cloud_usd_per_gpu_hour;
  }
};

}  // namespace llmplan::presets

#endif  // LLMPLAN_PRESETS_OWNERSHIP_H_

#include "planner/search/pricing.h"

#include <boost/json.hpp>
#include <cmath>
#include <set>

#include "presets/embedded.h"
#include "base/strict_json.h"

namespace llmplan::planner {
namespace {

namespace bj = boost::json;

// `key` of `o`, written {"value": X, "source": "..."} (a source is
// required: every default is cited), finite and within [min, max]
// (`min_open`: value > min).
Status read_sourced(const bj::object& o, const std::string& path, const char* key, double min,
                    bool min_open, double max, Sourced* out) {
  const std::string at = path + "." + key;
  auto it = o.find(key);
  if (it == o.end()) return Status::invalid_argument(at + ": missing");
  if (!it->value().is_object()) {
    return Status::invalid_argument(at + ": expected {\"value\": number, \"source\": text}");
  }
  const bj::object& w = it->value().get_object();
  for (const auto& kv : w) {
    if (kv.key() != "value" && kv.key() != "source") {
      return Status::invalid_argument(at + ": unknown key \"" + std::string(kv.key()) + "\"");
    }
  }
  auto v = w.find("value");
  auto s = w.find("source");
  if (v == w.end() || !v->value().is_number()) {
    return Status::invalid_argument(at + ".value: expected a number");
  }
  if (s == w.end() || !s->value().is_string() || s->value().get_string().empty()) {
    return Status::invalid_argument(at + ".source: expected a non-empty string");
  }
  const double x = v->value().to_number<double>();
  if (!std::isfinite(x) || (min_open ? !(x > min) : !(x >= min)) || x > max) {
    return Status::invalid_argument(at + ".value: " + std::to_string(x) + " is out of range");
  }
  out->value = x;
  out->source = std::string(s->value().get_string());
  return Status();
}

Status check_keys(const bj::object& o, const std::string& path,
                  std::initializer_list<const char*> keys) {
  for (const auto& kv : o) {
    bool known = false;
    for (const char* k : keys) known = known || kv.key() == k;
    if (!known) {
      return Status::invalid_argument(path + ": unknown key \"" + std::string(kv.key()) + "\"");
    }
  }
  return Status();
}

// Flag bounds (check_overrides).
constexpr double kMaxCapexUsdPerGpu = 1e7;
constexpr double kMaxYears = 30;
constexpr double kMaxPue = 5;
constexpr double kMaxUsdPerKwh = 10;

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

const OwnershipGpu* OwnershipFile::find(std::string_view gpu) const {
  for (const OwnershipGpu& g : gpus) {
    if (g.gpu == gpu) return &g;
  }
  return nullptr;
}

Result<OwnershipFile> parse_ownership(std::string_view text, const std::string& source_name) {
  LLMPLAN_ASSIGN_OR_RETURN(bj::value root, json::parse(text, source_name));
  if (!root.is_object()) return Status::invalid_argument(source_name + ": expected an object");
  const bj::object& o = root.get_object();
  const std::string& p = source_name;
  LLMPLAN_RETURN_IF_ERROR(check_keys(o, p,
                                     {"note", "amortisation_years", "pue", "usd_per_kwh",
                                      "non_gpu_power_share", "gpus"}));
  OwnershipFile f;
  LLMPLAN_RETURN_IF_ERROR(
      read_sourced(o, p, "amortisation_years", 0, true, kMaxYears, &f.amortisation_years));
  LLMPLAN_RETURN_IF_ERROR(read_sourced(o, p, "pue", 1, false, kMaxPue, &f.pue));
  LLMPLAN_RETURN_IF_ERROR(read_sourced(o, p, "usd_per_kwh", 0, true, kMaxUsdPerKwh, &f.usd_per_kwh));
  LLMPLAN_RETURN_IF_ERROR(
      read_sourced(o, p, "non_gpu_power_share", 0, false, 10, &f.non_gpu_power_share));
  auto gpus = o.find("gpus");
  if (gpus == o.end() || !gpus->value().is_array()) {
    return Status::invalid_argument(p + ".gpus: expected an array");
  }
  std::set<std::string> seen;
  const bj::array& a = gpus->value().get_array();
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string at = p + ".gpus[" + std::to_string(i) + "]";
    if (!a[i].is_object()) return Status::invalid_argument(at + ": expected an object");
    const bj::object& e = a[i].get_object();
    LLMPLAN_RETURN_IF_ERROR(
        check_keys(e, at, {"gpu", "capex_usd_per_gpu", "system_power_w", "system_gpus"}));
    OwnershipGpu g;
    auto name = e.find("gpu");
    if (name == e.end() || !name->value().is_string() || name->value().get_string().empty()) {
      return Status::invalid_argument(at + ".gpu: expected a GPU preset name");
    }
    g.gpu = std::string(name->value().get_string());
    if (!seen.insert(g.gpu).second) {
      return Status::invalid_argument(at + ".gpu: \"" + g.gpu + "\" is listed twice");
    }
    LLMPLAN_RETURN_IF_ERROR(
        read_sourced(e, at, "capex_usd_per_gpu", 0, true, kMaxCapexUsdPerGpu, &g.capex_usd_per_gpu));
    LLMPLAN_RETURN_IF_ERROR(read_sourced(e, at, "system_power_w", 0, true, 1e7, &g.system_power_w));
    LLMPLAN_RETURN_IF_ERROR(read_sourced(e, at, "system_gpus", 1, false, 1e6, &g.system_gpus));
    if (g.system_gpus.value != std::floor(g.system_gpus.value)) {
      return Status::invalid_argument(at + ".system_gpus.value: expected an integer");
    }
    f.gpus.push_back(std::move(g));
  }
  return f;
}

Result<OwnershipFile> builtin_ownership() {
  for (const presets::EmbeddedFile& file : presets::embedded_files()) {
    if (file.name != "ownership.json") continue;
    Result<OwnershipFile> f = parse_ownership(file.text, "built-in ownership.json");
    if (!f.ok()) return Status::internal("broken built-in preset: " + f.status().message());
    return f;
  }
  return Status::internal("built-in ownership.json is missing");
}

Status check_overrides(const OwnershipOverrides& o) {
  LLMPLAN_RETURN_IF_ERROR(check_flag("--capex-usd-per-gpu", o.capex_usd_per_gpu, 0, true,
                                     kMaxCapexUsdPerGpu, "a dollar amount > 0 and <= 1e7"));
  LLMPLAN_RETURN_IF_ERROR(check_flag("--amortisation-years", o.amortisation_years, 0, true,
                                     kMaxYears, "a number of years > 0 and <= 30"));
  LLMPLAN_RETURN_IF_ERROR(check_flag("--pue", o.pue, 1, false, kMaxPue, "between 1 and 5"));
  LLMPLAN_RETURN_IF_ERROR(check_flag("--usd-per-kwh", o.usd_per_kwh, 0, true, kMaxUsdPerKwh,
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

#include "presets/ownership.h"

#include <boost/json.hpp>
#include <cmath>
#include <set>

#include "base/number_text.h"
#include "base/strict_json.h"
#include "presets/embedded.h"

namespace llmplan::presets {
namespace {

namespace bj = boost::json;

// "FILE: key" for a key of the file's top-level object (a path without ": "),
// "FILE: a[0].key" below it.
std::string field(const std::string& path, const char* key) {
  return path + (path.find(": ") == std::string::npos ? ": " : ".") + key;
}

// `key` of `o`, written {"value": X, "source": "..."} (a source is
// required: every default is cited), finite and within [min, max]
// (`min_open`: value > min). `path` names the object: the file for the
// top level ("o.json: pue"), "o.json: gpus[0]" below it ("o.json: gpus[0].system_gpus").
Status read_sourced(const bj::object& o, const std::string& path, const char* key, double min,
                    bool min_open, double max, Sourced* out) {
  const std::string at = field(path, key);
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
    return Status::invalid_argument(at + ".value: " + number_text(x) + " is out of range (" +
                                    (min_open ? "> " : ">= ") + number_text(min) + ", <= " +
                                    number_text(max) + ")");
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
      read_sourced(o, p, "amortisation_years", 0, true, kMaxAmortisationYears, &f.amortisation_years));
  LLMPLAN_RETURN_IF_ERROR(read_sourced(o, p, "pue", 1, false, kMaxPue, &f.pue));
  LLMPLAN_RETURN_IF_ERROR(read_sourced(o, p, "usd_per_kwh", 0, true, kMaxUsdPerKwh, &f.usd_per_kwh));
  LLMPLAN_RETURN_IF_ERROR(
      read_sourced(o, p, "non_gpu_power_share", 0, false, 10, &f.non_gpu_power_share));
  auto gpus = o.find("gpus");
  if (gpus == o.end() || !gpus->value().is_array()) {
    return Status::invalid_argument(p + ": gpus: expected an array");
  }
  std::set<std::string> seen;
  const bj::array& a = gpus->value().get_array();
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string at = p + ": gpus[" + std::to_string(i) + "]";
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
  for (const EmbeddedFile& file : embedded_files()) {
    if (file.name != "ownership.json") continue;
    Result<OwnershipFile> f = parse_ownership(file.text, "built-in ownership.json");
    if (!f.ok()) return Status::internal("broken built-in preset: " + f.status().message());
    return f;
  }
  return Status::internal("built-in ownership.json is missing");
}

}  // namespace llmplan::presets

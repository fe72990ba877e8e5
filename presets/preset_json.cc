#include "presets/preset_json.h"

#include <boost/json.hpp>
#include <map>
#include <utility>

#include "scaling/law_json.h"
#include "simulator/cluster_json.h"
#include "simulator/model_json.h"
#include "base/strict_json.h"

namespace llmplan::presets {
namespace {

struct KindKey {
  PresetKind kind;
  const char* key;
};
constexpr KindKey kKindKeys[] = {
    {PresetKind::kGpu, "gpus"},     {PresetKind::kCluster, "clusters"},
    {PresetKind::kModel, "models"}, {PresetKind::kLaw, "laws"},
    {PresetKind::kPrice, "prices"}, {PresetKind::kCollectives, "collectives"}};

// Re-parses an entry's stored text. The text was produced by serialize(),
// so failure is a bug.
Result<boost::json::value> entry_value(const RawPreset& entry) {
  Result<boost::json::value> v = json::parse(entry.json, entry.path);
  if (!v.ok()) return Status::internal(v.status().message());
  return v;
}

}  // namespace

Result<std::vector<RawPreset>> parse_preset_text(std::string_view text,
                                                 const std::string& source_name) {
  LLMPLAN_ASSIGN_OR_RETURN(boost::json::value doc, json::parse(text, source_name));
  json::JsonObjectReader reader(doc, source_name);
  reader.ignore("note");
  reader.ignore("source");
  reader.ignore("description");
  std::vector<RawPreset> out;
  std::map<std::string, std::string, std::less<>> where;  // name -> path of first use
  for (const KindKey& kk : kKindKeys) {
    const boost::json::value* list = reader.child(kk.key);
    if (list == nullptr) continue;
    const std::string list_path = source_name + ": " + kk.key;
    if (!list->is_array()) return Status::invalid_argument(list_path + ": expected an array");
    const boost::json::array& items = list->get_array();
    if (out.size() + items.size() > kMaxPresetsPerFile) {
      return Status::invalid_argument(list_path + ": more than the " +
                                      std::to_string(kMaxPresetsPerFile) +
                                      " presets a preset file may hold");
    }
    for (size_t i = 0; i < items.size(); ++i) {
      RawPreset entry;
      entry.kind = kk.kind;
      entry.path = list_path + "[" + std::to_string(i) + "]";
      const boost::json::value& item = items[i];
      if (!item.is_object()) return Status::invalid_argument(entry.path + ": expected an object");
      const boost::json::object& o = item.get_object();
      auto name = o.find("name");
      if (name == o.end())
        return Status::invalid_argument(entry.path + ".name: missing required field");
      if (!name->value().is_string() || name->value().get_string().empty()) {
        return Status::invalid_argument(entry.path + ".name: expected a non-empty string");
      }
      entry.name = std::string(name->value().get_string());
      auto description = o.find("description");
      if (description != o.end()) {
        if (!description->value().is_string()) {
          return Status::invalid_argument(entry.path + ".description: expected a string");
        }
        entry.description = std::string(description->value().get_string());
      }
      auto [it, inserted] = where.emplace(entry.name, entry.path);
      if (!inserted) {
        return Status::invalid_argument(entry.path + ".name: \"" + entry.name +
                                        "\" is already used by " + it->second +
                                        " (names are unique across kinds)");
      }
      entry.json = boost::json::serialize(item);
      out.push_back(std::move(entry));
    }
  }
  LLMPLAN_RETURN_IF_ERROR(reader.finish());
  return out;
}

Result<simulator::GpuSpec> decode_gpu(const RawPreset& entry) {
  LLMPLAN_ASSIGN_OR_RETURN(boost::json::value v, entry_value(entry));
  simulator::GpuSpec gpu;
  LLMPLAN_RETURN_IF_ERROR(simulator::apply_gpu_json(v, entry.path, &gpu));
  return gpu;
}

Result<simulator::Model> decode_model(const RawPreset& entry) {
  LLMPLAN_ASSIGN_OR_RETURN(boost::json::value v, entry_value(entry));
  simulator::Model model;
  LLMPLAN_RETURN_IF_ERROR(simulator::apply_model_json(v, entry.path, &model));
  return model;
}

Result<scaling::LossLaw> decode_law(const RawPreset& entry) {
  LLMPLAN_ASSIGN_OR_RETURN(boost::json::value v, entry_value(entry));
  return scaling::law_from_json(v, entry.path);
}

Result<Price> decode_price(const RawPreset& entry) {
  LLMPLAN_ASSIGN_OR_RETURN(boost::json::value v, entry_value(entry));
  Price price;
  json::JsonObjectReader r(v, entry.path);
  r.read_string("name", &price.name, /*required=*/true);
  r.read_double("usd_per_gpu_hour", &price.usd_per_gpu_hour, /*required=*/true);
  if (r.status().ok() && !(price.usd_per_gpu_hour > 0)) {
    r.fail("usd_per_gpu_hour", "must be positive (leave a price out rather than write 0)");
  }
  r.read_string("gpu", &price.gpu);
  r.read_string("instance", &price.instance);
  r.read_string("date", &price.date);
  r.ignore("source");
  r.ignore("note");
  r.ignore("description");
  LLMPLAN_RETURN_IF_ERROR(r.finish());
  return price;
}

Result<simulator::MeasuredCollectives> decode_collectives(const RawPreset& entry) {
  LLMPLAN_ASSIGN_OR_RETURN(boost::json::value v, entry_value(entry));
  simulator::MeasuredCollectives m;
  LLMPLAN_RETURN_IF_ERROR(simulator::apply_collectives_json(v, entry.path, &m));
  return m;
}

Result<simulator::Cluster> decode_cluster(
    const RawPreset& entry,
    const std::function<Result<simulator::GpuSpec>(const std::string&)>& gpu,
    const std::function<Result<double>(const std::string&)>& usd_per_gpu_hour,
    const std::function<Result<simulator::MeasuredCollectives>(const std::string&)>& collectives) {
  LLMPLAN_ASSIGN_OR_RETURN(boost::json::value v, entry_value(entry));
  simulator::Cluster cluster;
  LLMPLAN_RETURN_IF_ERROR(simulator::apply_cluster_json(
      v, entry.path, simulator::ClusterPresetLookup{gpu, usd_per_gpu_hour, collectives}, &cluster));
  return cluster;
}

std::string pretty_preset(const RawPreset& entry) {
  Result<boost::json::value> v = entry_value(entry);
  return v.ok() ? json::pretty(*v) : entry.json + "\n";
}

Status at_file_root(const Status& status, const std::string& source_name) {
  const std::string prefix = source_name + ".";
  if (status.ok() || status.message().rfind(prefix, 0) != 0) return status;
  return Status(status.code(), source_name + ": " + status.message().substr(prefix.size()));
}

std::string preset_list_json(const std::vector<PresetInfo>& infos) {
  boost::json::array a;
  for (const PresetInfo& info : infos) {
    boost::json::object o;
    o["kind"] = to_string(info.kind);
    o["name"] = info.name;
    o["description"] = info.description;
    o["origin"] = info.origin;
    a.push_back(std::move(o));
  }
  return json::pretty(a);
}

}  // namespace llmplan::presets

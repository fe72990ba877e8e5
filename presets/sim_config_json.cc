// llmplan's own simulation config format (see sim_config.h).
#include <boost/json.hpp>
#include <utility>

#include "presets/preset_json.h"
#include "presets/sim_config.h"
#include "simulator/cluster_json.h"
#include "simulator/hf_config.h"
#include "base/input_file.h"
#include "simulator/model_json.h"
#include "simulator/plan_json.h"
#include "base/strict_json.h"

namespace llmplan::presets {
namespace {

// Starts *out from the preset named by the object's "preset" key (if any)
// and returns the object's other fields, to be applied on top.
template <typename T, typename Get>
Result<boost::json::object> start_from_preset(const boost::json::value& v, const std::string& path,
                                              const char* what, Get get, T* out,
                                              std::vector<std::string>* notes) {
  if (!v.is_object()) return Status::invalid_argument(path + ": expected an object");
  boost::json::object rest = v.get_object();
  auto it = rest.find("preset");
  if (it == rest.end()) return rest;
  if (!it->value().is_string()) {
    return Status::invalid_argument(path + ".preset: expected a " + std::string(what) +
                                    " preset name (a string)");
  }
  const std::string name(it->value().get_string());
  Result<T> preset = get(name);
  if (!preset.ok()) return preset.status().with_prefix(path + ".preset");
  *out = std::move(preset).value();
  rest.erase("preset");
  std::string overridden;
  for (const auto& kv : v.get_object()) {
    if (kv.key() != "preset") overridden += (overridden.empty() ? "" : ", ") + std::string(kv.key());
  }
  notes->push_back(std::string(what) + ": preset " + name +
                   (overridden.empty() ? "" : ", overriding " + overridden));
  return rest;
}

}  // namespace

Status validate(const SimConfig& config) {
  LLMPLAN_RETURN_IF_ERROR(simulator::validate(config.model, config.plan));
  LLMPLAN_RETURN_IF_ERROR(simulator::validate(config.cluster));
  const simulator::Cluster& c = config.cluster;
  if (c.max_gpus() > 0 && config.plan.world_size() > c.max_gpus()) {
    return Status::invalid_argument(
        "cluster.nodes: the plan needs tp * pp * dp = " + std::to_string(config.plan.world_size()) +
        " GPUs but the cluster has " + std::to_string(c.num_nodes) + " nodes x " +
        std::to_string(c.gpus_per_node) + " = " + std::to_string(c.max_gpus()));
  }
  return Status();
}

Result<SimConfig> load_sim_config_text(std::string_view text, const std::string& source_name,
                                       const Catalog& catalog) {
  LLMPLAN_ASSIGN_OR_RETURN(boost::json::value doc, json::parse(text, source_name));
  json::JsonObjectReader root(doc, source_name);
  const boost::json::value* model = root.child("model", /*required=*/true);
  const boost::json::value* plan = root.child("plan", /*required=*/true);
  const boost::json::value* cluster = root.child("cluster", /*required=*/true);
  root.ignore("note");
  root.ignore("description");
  LLMPLAN_RETURN_IF_ERROR(at_file_root(root.finish(), source_name));

  SimConfig config;
  const std::string base = source_name + ": ";

  if (simulator::is_hf_config(*model)) {
    // A Hugging Face config.json pasted as the model (simulator/hf_config.h).
    LLMPLAN_ASSIGN_OR_RETURN(simulator::HfModel hf,
                             simulator::model_from_hf_config(*model, base + "model"));
    config.model = hf.model;
    for (std::string& n : simulator::hf_config_notes(hf, base + "model")) config.notes.push_back(n);
  } else {
    LLMPLAN_ASSIGN_OR_RETURN(
        boost::json::object model_fields,
        start_from_preset(
            *model, base + "model", "model", [&](const std::string& n) { return catalog.model(n); },
            &config.model, &config.notes));
    LLMPLAN_RETURN_IF_ERROR(simulator::apply_model_json(model_fields, base + "model", &config.model));
  }

  if (plan->is_object() && plan->get_object().contains("preset")) {
    return Status::invalid_argument(base +
                                    "plan.preset: plans have no presets; give the plan's "
                                    "fields (tp, pp, dp, micro_batch, global_batch, ...)");
  }
  LLMPLAN_RETURN_IF_ERROR(simulator::apply_plan_json(*plan, base + "plan", &config.plan));

  LLMPLAN_ASSIGN_OR_RETURN(boost::json::object cluster_fields,
                           start_from_preset(
                               *cluster, base + "cluster", "cluster",
                               [&](const std::string& n) { return catalog.cluster(n); },
                               &config.cluster, &config.notes));
  simulator::ClusterPresetLookup lookup;
  lookup.gpu = [&](const std::string& n) { return catalog.gpu(n); };
  lookup.usd_per_gpu_hour = [&](const std::string& n) -> Result<double> {
    LLMPLAN_ASSIGN_OR_RETURN(Price p, catalog.price(n));
    return p.usd_per_gpu_hour;
  };
  lookup.collectives = [&](const std::string& n) { return catalog.collectives(n); };
  LLMPLAN_RETURN_IF_ERROR(
      simulator::apply_cluster_json(cluster_fields, base + "cluster", lookup, &config.cluster));

  LLMPLAN_RETURN_IF_ERROR(validate(config).with_prefix(source_name));
  return config;
}

Result<SimConfig> load_sim_config_file(const std::string& path, const Catalog& catalog) {
  LLMPLAN_ASSIGN_OR_RETURN(std::string text, read_input_file(path));
  return load_sim_config_text(text, path, catalog);
}

std::string sim_config_to_json(const SimConfig& config) {
  boost::json::object o;
  o["model"] = simulator::model_to_json(config.model);
  o["plan"] = simulator::plan_to_json(config.plan);
  o["cluster"] = simulator::cluster_to_json(config.cluster);
  return json::pretty(o);
}

}  // namespace llmplan::presets

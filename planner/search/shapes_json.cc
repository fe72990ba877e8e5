#include "planner/search/shapes_json.h"

#include <filesystem>
#include <iostream>

#include "planner/search/shapes.h"
#include "simulator/hf_config.h"
#include "base/input_file.h"
#include "simulator/model_json.h"
#include "base/strict_json.h"

namespace llmplan::planner {

Result<simulator::Model> parse_shape_entry(const boost::json::value& entry, const std::string& where,
                                           const simulator::Model& base,
                                           const presets::Catalog* catalog,
                                           const std::string& fields) {
  const std::string& at = fields.empty() ? where : fields;
  if (!entry.is_object()) return Status::invalid_argument(where + ": expected an object of model fields");
  if (simulator::is_hf_config(entry)) {
    // A Hugging Face config.json (simulator/hf_config.h); its notes go to
    // stderr, once per file or entry.
    // Its faults are the file's (exit 1, as for every file), named by the
    // config's key.
    LLMPLAN_ASSIGN_OR_RETURN(const simulator::HfModel hf,
                             simulator::model_from_hf_config(entry, where));
    for (const std::string& line : simulator::hf_config_notes(hf, where)) std::cerr << line << "\n";
    return hf.model;
  }
  simulator::Model m = base;
  boost::json::object object = entry.as_object();
  if (const boost::json::value* preset = object.if_contains("preset")) {
    if (!preset->is_string()) return Status::invalid_argument(at + ".preset: expected a model preset name");
    const std::string name(preset->as_string());
    if (catalog == nullptr) {
      return Status::invalid_argument(at + ".preset: presets are not available here");
    }
    auto found = catalog->model(name);
    if (!found.ok()) {
      return Status::invalid_argument(at + ".preset: unknown model preset '" + name +
                                      "' (see llmplan presets --kind model)");
    }
    m = found.value();
    object.erase("preset");
  } else {
    m.name = "";
  }
  LLMPLAN_RETURN_IF_ERROR(simulator::apply_model_json(object, at, &m));
  LLMPLAN_RETURN_IF_ERROR(simulator::validate(m).with_prefix(where));
  return m;
}

Result<std::vector<simulator::Model>> parse_shapes_text(std::string_view text,
                                                        const std::string& source_name,
                                                        const simulator::Model& base,
                                                        const presets::Catalog* catalog) {
  LLMPLAN_ASSIGN_OR_RETURN(boost::json::value v, json::parse(text, source_name));
  if (!v.is_array() || v.as_array().empty()) {
    return Status::invalid_argument("--shapes " + source_name +
                                    ": expected a non-empty JSON array of models");
  }
  if (v.as_array().size() > kMaxShapes) {
    return Status::invalid_argument("--shapes " + source_name + ": " +
                                    std::to_string(v.as_array().size()) + " shapes, more than " +
                                    std::to_string(kMaxShapes));
  }
  std::vector<simulator::Model> out;
  int i = 0;
  for (const boost::json::value& e : v.as_array()) {
    const std::string where = source_name + "[" + std::to_string(i) + "]";
    LLMPLAN_ASSIGN_OR_RETURN(simulator::Model m, parse_shape_entry(e, where, base, catalog));
    if (m.name.empty()) m.name = "shape" + std::to_string(i);
    out.push_back(m);
    ++i;
  }
  return out;
}

Result<std::vector<simulator::Model>> parse_shapes_text(std::string_view text,
                                                        const std::string& source_name,
                                                        int seq_length, int vocab_size) {
  return parse_shapes_text(text, source_name, family_template(Family::kGpt, seq_length, vocab_size),
                           nullptr);
}

Result<std::vector<simulator::Model>> read_shapes_file(const std::string& path,
                                                       const simulator::Model& base,
                                                       const presets::Catalog* catalog) {
  LLMPLAN_ASSIGN_OR_RETURN(std::string text, read_input_file(path));
  return parse_shapes_text(text, path, base, catalog);
}

Result<std::vector<simulator::Model>> read_shapes_file(const std::string& path, int seq_length,
                                                       int vocab_size) {
  LLMPLAN_ASSIGN_OR_RETURN(std::string text, read_input_file(path));
  return parse_shapes_text(text, path, seq_length, vocab_size);
}

Result<simulator::Model> resolve_pinned_model(const std::string& name_or_file,
                                              const simulator::Model& base,
                                              const presets::Catalog& catalog) {
  auto preset = catalog.model(name_or_file);
  if (preset.ok()) return preset;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(name_or_file, ec)) {
    return Status::invalid_argument("--model: '" + name_or_file +
                                    "' is neither a model preset (llmplan presets --kind model) "
                                    "nor a file");
  }
  LLMPLAN_ASSIGN_OR_RETURN(std::string text, read_input_file(name_or_file));
  LLMPLAN_ASSIGN_OR_RETURN(boost::json::value v, json::parse(text, name_or_file));
  LLMPLAN_ASSIGN_OR_RETURN(simulator::Model m,
                           parse_shape_entry(v, "--model " + name_or_file, base, &catalog,
                                             "--model " + name_or_file + ": model"));
  if (m.name.empty()) m.name = std::filesystem::path(name_or_file).stem().string();
  return m;
}

}  // namespace llmplan::planner

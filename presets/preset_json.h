// The JSON side of the preset catalog (internal to presets/): splitting a
// preset file into entries and decoding one entry into its typed value.
// The interface is Boost-free; entries travel as compact JSON text so that
// Catalog (catalog.cc) stays free of Boost.JSON.
#ifndef LLMPLAN_PRESETS_PRESET_JSON_H_
#define LLMPLAN_PRESETS_PRESET_JSON_H_

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "presets/catalog.h"
#include "scaling/law.h"
#include "simulator/cluster.h"
#include "simulator/model.h"
#include "base/status.h"

namespace llmplan::presets {

// One entry of a preset file.
struct RawPreset {
  PresetKind kind = PresetKind::kGpu;
  std::string name;
  std::string json;         // the entry's object, compact JSON
  std::string path;         // where it came from, e.g. "my.json: gpus[2]"
  std::string description;  // its "description" string, or empty
};

// The most entries (of all kinds together) one preset file may hold. Every
// entry is re-checked against the catalog when a file is added, so the cap
// bounds that work; the built-in files hold a few dozen.
inline constexpr size_t kMaxPresetsPerFile = 1000;

// Splits a preset file: one object with optional arrays "gpus", "clusters",
// "models", "laws", "prices", "collectives" (and documentation keys "note", "source",
// "description"). Each entry must be an object with a non-empty string
// "name"; names must be unique within the file across all kinds; at most
// kMaxPresetsPerFile entries.
// ParseError for malformed JSON (source_name:line:col); InvalidArgument
// naming source_name and the JSON path otherwise. Entries are not decoded
// here. Thread-safe.
Result<std::vector<RawPreset>> parse_preset_text(std::string_view text,
                                                 const std::string& source_name);

// Decoders: the entry's fields applied onto a default value, errors naming
// entry.path and the field. They check single fields only (callers run
// the simulator's validate()). Thread-safe when the lookups are.
Result<simulator::GpuSpec> decode_gpu(const RawPreset& entry);
Result<simulator::Model> decode_model(const RawPreset& entry);
Result<scaling::LossLaw> decode_law(const RawPreset& entry);
// Fields: name, usd_per_gpu_hour (> 0, required), gpu, instance, date.
Result<Price> decode_price(const RawPreset& entry);
// Fields: name, all_reduce (simulator/cluster_json.h); the curves are
// validated. The preset's name is the result's name.
Result<simulator::MeasuredCollectives> decode_collectives(const RawPreset& entry);
// `gpu`, `usd_per_gpu_hour` and `collectives` resolve the preset names a
// cluster uses.
Result<simulator::Cluster> decode_cluster(
    const RawPreset& entry,
    const std::function<Result<simulator::GpuSpec>(const std::string&)>& gpu,
    const std::function<Result<double>(const std::string&)>& usd_per_gpu_hour,
    const std::function<Result<simulator::MeasuredCollectives>(const std::string&)>& collectives);

// The entry pretty-printed (json::pretty).
std::string pretty_preset(const RawPreset& entry);

// JsonObjectReader names a field of an object "path.key"; for the top-level
// object of a file that reads "run.json.model". Returns `status` with such
// a leading "source_name." rewritten to "source_name: ".
Status at_file_root(const Status& status, const std::string& source_name);

// `infos` as a JSON array of {"kind", "name", "description", "origin"}.
std::string preset_list_json(const std::vector<PresetInfo>& infos);

}  // namespace llmplan::presets

#endif  // LLMPLAN_PRESETS_PRESET_JSON_H_

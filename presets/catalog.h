// The named presets llmplan knows: GPUs, clusters, models, scaling laws and
// prices. The built-in ones are compiled into the binary (presets/*.json), so
// llmplan works from any directory; users add their own files with
// --preset-file, whose entries replace built-ins of the same name.
//
// Every number in a built-in preset carries its source (tests check this).
#ifndef LLMPLAN_PRESETS_CATALOG_H_
#define LLMPLAN_PRESETS_CATALOG_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "scaling/law.h"
#include "simulator/cluster.h"
#include "simulator/model.h"
#include "base/status.h"

namespace llmplan::presets {

struct RawPreset;  // preset_json.h

enum class PresetKind { kGpu, kCluster, kModel, kLaw, kPrice, kCollectives };
const char* to_string(PresetKind kind);

struct PresetInfo {
  PresetKind kind;
  std::string name;
  std::string description;  // one line
  std::string origin;       // "built-in" or the user file's path
};

// A price preset: what one GPU-hour of a cloud instance cost, and when.
struct Price {
  std::string name;
  double usd_per_gpu_hour = 0;
  std::string gpu;       // the GPU preset it prices; empty when not stated
  std::string instance;  // e.g. "p5.48xlarge"; empty when not stated
  std::string date;      // when the price was current, e.g. "2025-06"

  friend bool operator==(const Price&, const Price&) = default;
};

// An immutable-after-loading set of presets. Copying is cheap (shared
// storage); lookups are safe from many threads once loading is done.
class Catalog {
 public:
  // The built-in presets. Fails only if an embedded file is broken (a bug).
  static Result<Catalog> builtin();

  // Adds the presets of a user file, in the format of the built-in
  // presets/*.json: one object with optional arrays "gpus", "clusters",
  // "models", "laws", "prices", "collectives" of named entries. Entries replace
  // earlier presets of the same name and kind; a name may appear once per
  // file, and may not change kind. Every preset is re-checked (a cluster
  // must resolve its GPU and price), and on any error the catalog is left
  // unchanged. Errors name the file and the JSON path. The file is read
  // with read_input_file (base/input_file.h: at most 16 MiB) and may
  // hold at most kMaxPresetsPerFile (1000) entries. Not thread-safe
  // against concurrent readers of the same Catalog object; copies made
  // earlier are unaffected (copy-on-write).
  Status add_file(const std::string& path);
  // As add_file, for text already in memory; `source_name` names it in
  // messages and becomes the entries' origin.
  Status add_text(std::string_view json_text, const std::string& source_name);

  // Every preset, grouped by kind (gpu, cluster, model, law, price,
  // collectives), each
  // kind in the order loaded. Descriptions are the entry's "description"
  // (if any) followed by a summary of its figures.
  std::vector<PresetInfo> list() const;
  // One preset as pretty-printed JSON, as stored (key order kept; numbers
  // re-printed by Boost.JSON). NotFound names the preset and lists similar
  // names (or all names when none is similar).
  Result<std::string> show(std::string_view name) const;

  Result<simulator::GpuSpec> gpu(std::string_view name) const;
  // The cluster with its GPU and price resolved.
  Result<simulator::Cluster> cluster(std::string_view name) const;
  Result<simulator::Model> model(std::string_view name) const;
  Result<scaling::LossLaw> law(std::string_view name) const;
  Result<Price> price(std::string_view name) const;
  // Measured in-node collective curves of one node type, which clusters name
  // with "collectives": NAME (e.g. "a100-nvswitch-vtrain").
  Result<simulator::MeasuredCollectives> collectives(std::string_view name) const;
  // NotFound from the typed getters names the preset and lists the presets
  // of that kind (and says so when the name belongs to another kind).

  struct Impl;

 private:
  // Adds `raws` (from one file) to a copy of the storage, checks every
  // preset against the result, and commits only when all are valid.
  Status merge(std::vector<RawPreset> raws, const std::string& origin, bool allow_replace);
  // Decodes and validates one stored preset, resolving its references.
  Status check_entry(const RawPreset& raw) const;

  std::shared_ptr<Impl> impl_;
};

}  // namespace llmplan::presets

#endif  // LLMPLAN_PRESETS_CATALOG_H_

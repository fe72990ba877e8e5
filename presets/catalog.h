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
#include "simulator/status.h"

namespace llmplan::presets {

enum class PresetKind { kGpu, kCluster, kModel, kLaw, kPrice };
const char* to_string(PresetKind kind);

struct PresetInfo {
  PresetKind kind;
  std::string name;
  std::string description;  // one line
  std::string origin;       // "built-in" or the user file's path
};

// An immutable-after-loading set of presets. Copying is cheap (shared
// storage); lookups are safe from many threads once loading is done.
class Catalog {
 public:
  // The built-in presets. Fails only if an embedded file is broken (a bug).
  static Result<Catalog> builtin();

  // Adds the presets of a user file (same format as presets/*.json).
  // Errors name the file and the JSON path.
  Status add_file(const std::string& path);
  Status add_text(std::string_view json_text, const std::string& source_name);

  std::vector<PresetInfo> list() const;
  // One preset as pretty-printed JSON, as stored. NotFound names the preset
  // and lists similar names.
  Result<std::string> show(std::string_view name) const;

  Result<simulator::GpuSpec> gpu(std::string_view name) const;
  // The cluster with its GPU and price resolved.
  Result<simulator::Cluster> cluster(std::string_view name) const;
  Result<simulator::Model> model(std::string_view name) const;
  Result<scaling::LossLaw> law(std::string_view name) const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace llmplan::presets

#endif  // LLMPLAN_PRESETS_CATALOG_H_

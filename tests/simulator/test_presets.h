// What the simulator tests share to load the built-in presets: the catalog,
// a model or cluster by name, the names of the model presets; an expectation
// fails when one does not load.
#ifndef LLMPLAN_TESTS_SIMULATOR_TEST_PRESETS_H_
#define LLMPLAN_TESTS_SIMULATOR_TEST_PRESETS_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "presets/catalog.h"
#include "simulator/cluster.h"
#include "simulator/model.h"

namespace llmplan::simulator::testing {

// The built-in presets; an expectation fails (and the catalog is empty) when
// they do not load.
inline presets::Catalog builtin_catalog() {
  Result<presets::Catalog> catalog = presets::Catalog::builtin();
  EXPECT_TRUE(catalog.ok()) << catalog.status().message();
  return catalog.ok() ? *catalog : presets::Catalog();
}

// The built-in model preset `name` (an empty model and a failed expectation
// when there is none).
inline Model preset_model(const std::string& name) {
  Result<Model> m = builtin_catalog().model(name);
  EXPECT_TRUE(m.ok()) << name;
  return m.ok() ? *m : Model();
}

// The built-in cluster preset `name` (an empty cluster and a failed
// expectation when there is none).
inline Cluster preset_cluster(const std::string& name) {
  Result<Cluster> c = builtin_catalog().cluster(name);
  EXPECT_TRUE(c.ok()) << name;
  return c.ok() ? *c : Cluster();
}

// The names of the model presets in `catalog`, in its order.
inline std::vector<std::string> model_preset_names(const presets::Catalog& catalog) {
  std::vector<std::string> models;
  for (const presets::PresetInfo& info : catalog.list()) {
    if (info.kind == presets::PresetKind::kModel) models.push_back(info.name);
  }
  return models;
}

// A built-in model preset on a built-in cluster preset.
struct PresetPair {
  std::string cluster_name;
  Cluster cluster;
  Model model;
};
// Every model preset of the built-in catalog (at least ten) on each cluster
// of `clusters`, clusters outermost; a failed expectation for a preset that
// does not load.
inline std::vector<PresetPair> every_model_preset_on(const std::vector<std::string>& clusters) {
  const presets::Catalog catalog = builtin_catalog();
  const std::vector<std::string> models = model_preset_names(catalog);
  EXPECT_GE(models.size(), 10u);
  std::vector<PresetPair> out;
  for (const std::string& cluster_name : clusters) {
    Result<Cluster> cluster = catalog.cluster(cluster_name);
    EXPECT_TRUE(cluster.ok()) << cluster.status().message();
    for (const std::string& name : models) {
      Result<Model> model = catalog.model(name);
      EXPECT_TRUE(model.ok()) << model.status().message();
      if (cluster.ok() && model.ok()) out.push_back({cluster_name, *cluster, *model});
    }
  }
  return out;
}

}  // namespace llmplan::simulator::testing

#endif  // LLMPLAN_TESTS_SIMULATOR_TEST_PRESETS_H_

// Checks of the built-in preset data itself: provenance of every number,
// every file embedded, every preset valid, and the published figures.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "presets/catalog.h"
#include "presets/embedded.h"
#include "base/strict_json.h"

namespace llmplan::presets {
namespace {

bool is_provenance_wrapper(const boost::json::object& o) {
  if (!o.contains("value")) return false;
  for (const auto& kv : o) {
    if (kv.key() != "value" && kv.key() != "source" && kv.key() != "note" && kv.key() != "date") {
      return false;
    }
  }
  return true;
}

bool has_source(const boost::json::object& o) {
  auto it = o.find("source");
  return it != o.end() && it->value().is_string() && !it->value().get_string().empty();
}

// Appends to *missing the path of every number that neither is written
// {"value": X, "source": "..."} nor sits in an object with a "source" (or
// in an object that is an element of an array held by such an object: a
// table of numbers shares its owner's source, e.g. a GPU's held-out error
// quantiles).
void find_unsourced(const boost::json::value& v, const std::string& path, bool sourced,
                    std::vector<std::string>* missing, bool array_element = false) {
  if (v.is_number()) {
    if (!sourced) missing->push_back(path);
  } else if (v.is_array()) {
    const auto& a = v.get_array();
    for (size_t i = 0; i < a.size(); ++i) {
      find_unsourced(a[i], path + "[" + std::to_string(i) + "]", sourced, missing, true);
    }
  } else if (v.is_object()) {
    const auto& o = v.get_object();
    if (is_provenance_wrapper(o)) {
      if (!has_source(o)) missing->push_back(path + " (no source beside value)");
      return;
    }
    const bool here = has_source(o) || (array_element && sourced);
    for (const auto& kv : o) {
      find_unsourced(kv.value(), path + "." + std::string(kv.key()), here, missing);
    }
  }
}

std::vector<std::string> unsourced(const boost::json::value& v, const std::string& name) {
  std::vector<std::string> missing;
  find_unsourced(v, name, false, &missing);
  return missing;
}

TEST(PresetFiles, TheSourceCheckFindsBareNumbers) {
  Result<boost::json::value> v = json::parse(
      R"({"gpus": [{"name": "x", "tdp_w": 400, "hbm_bytes": {"value": 1, "source": "s"},
                    "roofline": {"source": "default", "gemm_tile": 128},
                    "num_sms": {"value": 108}}]})",
      "t");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(
      unsourced(*v, "t"),
      (std::vector<std::string>{"t.gpus[0].tdp_w", "t.gpus[0].num_sms (no source beside value)"}));
}

TEST(PresetFiles, EveryBuiltinNumberHasASource) {
  ASSERT_FALSE(embedded_files().empty());
  for (const EmbeddedFile& file : embedded_files()) {
    Result<boost::json::value> v = json::parse(file.text, file.name);
    ASSERT_TRUE(v.ok()) << v.status().message();
    std::vector<std::string> missing = unsourced(*v, std::string(file.name));
    std::string list;
    for (const std::string& m : missing) list += "\n  " + m;
    EXPECT_TRUE(missing.empty()) << file.name << " has numbers without a source:" << list;
  }
}

TEST(PresetFiles, EveryJsonFileInPresetsIsEmbedded) {
  std::set<std::string> embedded;
  for (const EmbeddedFile& file : embedded_files()) embedded.insert(std::string(file.name));
  std::set<std::string> on_disk;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(LLMPLAN_SOURCE_DIR) + "/presets")) {
    if (entry.path().extension() == ".json") on_disk.insert(entry.path().filename().string());
  }
  EXPECT_EQ(embedded, on_disk);
  for (const char* name : {"gpus.json", "clusters.json", "models.json", "prices.json"}) {
    EXPECT_EQ(embedded.count(name), 1u) << name;
  }
}

}  // namespace
}  // namespace llmplan::presets

// The Hugging Face example configs under data/examples/hf/, read as models
// for the tests of simulator/hf_config.h.
#ifndef LLMPLAN_TESTS_PLANNER_HF_EXAMPLE_H_
#define LLMPLAN_TESTS_PLANNER_HF_EXAMPLE_H_

#include <gtest/gtest.h>

#include <string>

#include "base/strict_json.h"
#include "simulator/hf_config.h"

namespace llmplan::simulator::testing {

// data/examples/hf/`name` mapped to a model; a failed expectation and an
// empty HfModel when it does not read or map.
inline HfModel load_hf_example(const std::string& name) {
  const std::string path = std::string(LLMPLAN_DATA_DIR) + "/examples/hf/" + name;
  Result<boost::json::value> v = json::parse_file(path);
  EXPECT_TRUE(v.ok()) << v.status().message();
  if (!v.ok()) return {};
  Result<HfModel> hf = model_from_hf_config(v.value(), name);
  EXPECT_TRUE(hf.ok()) << hf.status().message();
  return hf.ok() ? hf.value() : HfModel{};
}

}  // namespace llmplan::simulator::testing

#endif  // LLMPLAN_TESTS_PLANNER_HF_EXAMPLE_H_

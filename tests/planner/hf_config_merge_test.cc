// Hugging Face configs whose keys map onto the model keys of helpers "mla"
// (q_lora_rank, kv_lora_rank, qk_*_head_dim, v_head_dim, mtp_layers),
// "moe" (router_groups, router_group_limit) and "mamba" (layer_pattern,
// mamba_*, moe_latent_size, activation "squared_relu"): DeepSeek-V3 and
// Nemotron 3 Nano from data/examples/hf/. Not in sources.cmake until those
// keys are merged (issue #27); the checks read the mapped model back as
// llmplan JSON so that they do not depend on the C++ field names.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <utility>

#include "base/strict_json.h"
#include "simulator/hf_config.h"
#include "simulator/model_json.h"
#include "tests/planner/hf_example.h"

namespace llmplan::simulator {
namespace {

// The example's model as llmplan JSON (also the whole mapping in `out`).
boost::json::object mapped(const std::string& name, HfModel* out = nullptr) {
  const HfModel hf = testing::load_hf_example(name);
  if (out != nullptr) *out = hf;
  return model_to_json(hf.model).as_object();
}

int64_t at(const boost::json::object& o, const char* key) {
  const boost::json::value* v = o.if_contains(key);
  EXPECT_NE(v, nullptr) << key;
  return v == nullptr ? -1 : v->to_number<int64_t>();
}

// Expects every (key, value) of `fields` among `o`'s integer fields.
void expect_ints(const boost::json::object& o,
                 std::initializer_list<std::pair<const char*, int64_t>> fields) {
  for (const auto& [key, value] : fields) EXPECT_EQ(at(o, key), value) << key;
}

TEST(HfConfigMerge, DeepseekV3) {
  HfModel hf;
  const boost::json::object o = mapped("deepseek-v3.json", &hf);
  expect_ints(o, {{"layers", 61},
                  {"hidden", 7168},
                  {"heads", 128},
                  {"ffn_hidden", 18432},
                  {"experts", 256},
                  {"top_k", 8},
                  {"expert_ffn_hidden", 2048},
                  {"shared_experts", 1},
                  {"moe_first_dense", 3},
                  {"moe_every", 1}});
  EXPECT_EQ(o.at("router").as_string(), "sigmoid");
  expect_ints(o, {{"q_lora_rank", 1536},
                  {"kv_lora_rank", 512},
                  {"qk_nope_head_dim", 128},
                  {"qk_rope_head_dim", 64},
                  {"v_head_dim", 128},
                  {"mtp_layers", 1},
                  {"router_groups", 8},
                  {"router_group_limit", 4},
                  {"vocab", 129280}});
  EXPECT_EQ(at(o, "seq"), 8192);  // max_position_embeddings 163840
  // DeepSeek-V3 technical report (arXiv:2412.19437): 671B total, 37B
  // activated (the main model; the MTP module's 14B not included).
  simulator::Model main_model = hf.model;
  main_model.mtp_layers = 0;
  EXPECT_NEAR(main_model.active_parameter_count() / 37e9, 1.0, 0.03);
}

TEST(HfConfigMerge, Nemotron3Nano) {
  const boost::json::object o = mapped("nemotron3-nano.json");
  expect_ints(
      o, {{"layers", 52}, {"hidden", 2688}, {"heads", 32}, {"kv_heads", 2}, {"head_dim", 128}});
  EXPECT_EQ(o.at("layer_pattern").as_string(),
            "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME");
  expect_ints(o, {{"mamba_heads", 64},
                  {"mamba_head_dim", 64},
                  {"mamba_state_dim", 128},
                  {"mamba_groups", 8},
                  {"mamba_conv_kernel", 4},
                  {"mamba_chunk_size", 128}});
  EXPECT_EQ(o.at("activation").as_string(), "squared_relu");
  expect_ints(o, {{"experts", 128}, {"top_k", 6}, {"expert_ffn_hidden", 1856}});
  // One shared expert of 3712 = 2 x 1856.
  EXPECT_EQ(at(o, "shared_experts"), 2);
  EXPECT_EQ(o.at("router").as_string(), "sigmoid");
  EXPECT_EQ(at(o, "vocab"), 131072);
  // Nemotron-H's attention layers have no position embedding: no RoPE.
  EXPECT_EQ(at(o, "rotary_fraction"), 0);
}

}  // namespace
}  // namespace llmplan::simulator

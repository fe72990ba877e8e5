// Hugging Face config.json as a model (simulator/hf_config.h): one test per
// example config under data/examples/hf/ checking the mapped fields, the
// notes, and the bad-input errors. DeepSeek-V3 and Nemotron-H need the MLA
// and Mamba keys: hf_config_merge_test.cc.
#include "simulator/hf_config.h"

#include <gtest/gtest.h>

#include <string>

#include "base/strict_json.h"
#include "tests/planner/hf_example.h"

namespace llmplan::simulator {
namespace {

HfModel load(const std::string& name) { return testing::load_hf_example(name); }

bool contains(const std::vector<std::string>& v, const std::string& s) {
  for (const std::string& x : v) {
    if (x == s || x.rfind(s + " ", 0) == 0) return true;
  }
  return false;
}

TEST(HfConfig, Llama3_8b) {
  const HfModel hf = load("llama3-8b.json");
  const Model& m = hf.model;
  EXPECT_EQ(hf.architecture, "LlamaForCausalLM");
  EXPECT_EQ(m.num_layers, 32);
  EXPECT_EQ(m.hidden_size, 4096);
  EXPECT_EQ(m.num_heads, 32);
  EXPECT_EQ(m.kv_heads(), 8);
  EXPECT_EQ(m.ffn_hidden(), 14336);
  EXPECT_EQ(m.vocab_size, 128256);
  EXPECT_EQ(m.seq_length, 8192);  // max_position_embeddings 8192
  EXPECT_EQ(m.activation, Activation::kSwiglu);
  EXPECT_EQ(m.positions, PositionEmbedding::kRotary);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_FALSE(m.linear_bias);
  EXPECT_FALSE(m.is_moe());
  // Llama 3 8B: 8.03B parameters (Meta's model card: 8B).
  EXPECT_EQ(m.parameter_count(), 8030261248);
  EXPECT_TRUE(contains(hf.ignored, "rope_theta"));
  EXPECT_TRUE(contains(hf.ignored, "bos_token_id"));
  EXPECT_TRUE(hf.warnings.empty());
}

TEST(HfConfig, Qwen3_30bA3b) {
  const HfModel hf = load("qwen3-30b-a3b.json");
  const Model& m = hf.model;
  EXPECT_EQ(m.num_layers, 48);
  EXPECT_EQ(m.hidden_size, 2048);
  EXPECT_EQ(m.num_heads, 32);
  EXPECT_EQ(m.kv_heads(), 4);
  EXPECT_EQ(m.head_dim(), 128);
  EXPECT_EQ(m.num_experts, 128);
  EXPECT_EQ(m.moe_top_k, 8);
  EXPECT_EQ(m.moe_ffn_hidden(), 768);
  EXPECT_EQ(m.moe_layer_every, 1);
  EXPECT_EQ(m.moe_first_dense, 0);
  EXPECT_EQ(m.num_moe_layers(), 48);
  EXPECT_EQ(m.sliding_window, 0);  // "sliding_window": null, use_sliding_window false
  EXPECT_EQ(m.vocab_size, 151936);
  // max_position_embeddings 40960 is longer than the default training seq.
  EXPECT_EQ(m.seq_length, kDefaultHfSeq);
  EXPECT_NE(hf.seq_note.find("max_position_embeddings 40960 is the context limit"), std::string::npos);
  // The model card's 30.5B total / 3.3B active (QK-norm weights not counted).
  EXPECT_NEAR(m.parameter_count() / 30.5e9, 1.0, 0.01);
  EXPECT_NEAR(m.active_parameter_count() / 3.3e9, 1.0, 0.02);
}

TEST(HfConfig, Mixtral8x7b) {
  const HfModel hf = load("mixtral-8x7b.json");
  const Model& m = hf.model;
  EXPECT_EQ(m.num_layers, 32);
  EXPECT_EQ(m.num_experts, 8);
  EXPECT_EQ(m.moe_top_k, 2);
  EXPECT_EQ(m.moe_ffn_hidden(), 14336);
  EXPECT_EQ(m.moe_router, MoeRouter::kSoftmax);
  EXPECT_EQ(m.sliding_window, 0);
  EXPECT_EQ(m.vocab_size, 32000);
  // Jiang et al. 2024: 46.7B total, 12.9B active.
  EXPECT_NEAR(m.parameter_count() / 46.7e9, 1.0, 0.01);
  EXPECT_NEAR(m.active_parameter_count() / 12.9e9, 1.0, 0.01);
}

TEST(HfConfig, GptOss120b) {
  const HfModel hf = load("gpt-oss-120b.json");
  const Model& m = hf.model;
  EXPECT_EQ(m.num_layers, 36);
  EXPECT_EQ(m.hidden_size, 2880);
  EXPECT_EQ(m.num_heads, 64);
  EXPECT_EQ(m.kv_heads(), 8);
  EXPECT_EQ(m.head_dim(), 64);
  EXPECT_EQ(m.num_experts, 128);
  EXPECT_EQ(m.moe_top_k, 4);
  EXPECT_EQ(m.moe_ffn_hidden(), 2880);
  EXPECT_TRUE(m.linear_bias);
  EXPECT_EQ(m.sliding_window, 128);
  EXPECT_EQ(m.full_attention_every, 2);  // sliding, full, sliding, ...
  EXPECT_EQ(m.vocab_size, 201088);
  EXPECT_TRUE(contains(hf.warnings, "attention sinks"));
  // swiglu_limit 7.0: the clamped gated activation, costed in the experts.
  EXPECT_EQ(m.activation_clamp, 7.0);
  EXPECT_FALSE(contains(hf.ignored, "swiglu_limit"));
  // Model card: 116.83B total, 5.13B active (the card leaves the input
  // embedding, V h = 0.58B, out of active; llmplan counts it).
  EXPECT_NEAR(m.parameter_count() / 116.83e9, 1.0, 0.01);
  const double embedding = 201088.0 * 2880;
  EXPECT_NEAR((m.active_parameter_count() - embedding) / 5.13e9, 1.0, 0.01);
}

TEST(HfConfig, Llama4ScoutEqualsThePreset) {
  const HfModel hf = load("llama4-scout.json");
  const Model& m = hf.model;
  EXPECT_EQ(hf.architecture, "Llama4ForConditionalGeneration");
  EXPECT_EQ(m.num_layers, 48);
  EXPECT_EQ(m.num_experts, 16);
  EXPECT_EQ(m.moe_top_k, 1);
  EXPECT_EQ(m.moe_shared_experts, 1);
  EXPECT_EQ(m.moe_ffn_hidden(), 8192);
  EXPECT_EQ(m.ffn_hidden(), 16384);
  EXPECT_EQ(m.moe_router, MoeRouter::kSigmoid);
  EXPECT_EQ(m.attention_chunk, 8192);
  EXPECT_EQ(m.global_attention_every, 4);
  EXPECT_EQ(m.seq_length, 8192);  // max_position_embeddings 10485760
  EXPECT_EQ(m.parameter_count(), 107769861120);
  EXPECT_TRUE(contains(hf.warnings, "vision_config"));
  EXPECT_TRUE(contains(hf.ignored, "attn_temperature_tuning"));
  const std::vector<std::string> notes = hf_config_notes(hf, "cfg.json");
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0].rfind("cfg.json: Hugging Face config (Llama4ForConditionalGeneration): seq 8192 ", 0), 0u);
  EXPECT_EQ(notes[1].rfind("cfg.json: warning: not modelled: vision_config", 0), 0u);
}

TEST(HfConfig, Llama4MaverickLayoutFromInterleaveStep) {
  // Maverick's text_config differs from Scout's in 128 experts and
  // interleave_moe_layer_step 2 (MoE on layers 1, 3, ..., 47).
  const std::string text = R"({"architectures": ["Llama4ForCausalLM"], "hidden_size": 5120,
    "intermediate_size": 8192, "intermediate_size_mlp": 16384, "num_hidden_layers": 48,
    "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 202048,
    "num_local_experts": 128, "num_experts_per_tok": 1, "interleave_moe_layer_step": 2,
    "attention_chunk_size": 8192, "no_rope_layer_interval": 4})";
  Result<boost::json::value> v = json::parse(text, "t");
  ASSERT_TRUE(v.ok());
  Result<HfModel> hf = model_from_hf_config(v.value(), "t");
  ASSERT_TRUE(hf.ok()) << hf.status().message();
  EXPECT_EQ(hf->model.parameter_count(), 400711848960);
  EXPECT_FALSE(hf->model.is_moe_layer(0));
  EXPECT_TRUE(hf->model.is_moe_layer(1));
  // An explicit moe_layers that disagrees with the step (every layer).
  std::string every;
  for (int i = 0; i < 48; ++i) every += (i ? ", " : "") + std::to_string(i);
  Result<boost::json::value> bad =
      json::parse(text.substr(0, text.size() - 1) + R"(, "moe_layers": [)" + every + "]}", "t");
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(model_from_hf_config(bad.value(), "t").status().message(),
            "t: moe_layers: conflicts with interleave_moe_layer_step 2");
}

Status error_of(const std::string& text) {
  Result<boost::json::value> v = json::parse(text, "c");
  if (!v.ok()) return v.status();
  return model_from_hf_config(v.value(), "c").status();
}

// partial_rotary_factor (Nemotron, Phi, Qwen3-Next) is the share of each
// head RoPE rotates: mapped to Model::rotary_fraction, not ignored; a value
// outside [0, 1] is refused naming the field.
TEST(HfConfig, PartialRotaryFactorIsTheRotaryFraction) {
  const std::string body = R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 1024,
      "intermediate_size": 4096, "num_hidden_layers": 4, "num_attention_heads": 8,
      "vocab_size": 32000, "partial_rotary_factor": )";
  Result<boost::json::value> v = json::parse(body + "0.5}", "c");
  ASSERT_TRUE(v.ok());
  Result<HfModel> hf = model_from_hf_config(v.value(), "c");
  ASSERT_TRUE(hf.ok()) << hf.status().message();
  EXPECT_EQ(hf->model.rotary_fraction, 0.5);
  EXPECT_FALSE(contains(hf->ignored, "partial_rotary_factor"));
  EXPECT_NE(error_of(body + "1.5}").message().find("rotary_fraction"), std::string::npos);
  EXPECT_EQ(load("llama3-8b.json").model.rotary_fraction, 1.0);
}

TEST(HfConfig, BadInputIsOneLineNamingTheKey) {
  const std::string body = R"("hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 4,
      "num_attention_heads": 8, "vocab_size": 32000)";
  EXPECT_EQ(error_of(R"({"architectures": ["T5ForConditionalGeneration"], )" + body + "}").message(),
            "c: architectures: unsupported architecture T5ForConditionalGeneration (supported: " +
                hf_supported_architectures() + ")");
  EXPECT_EQ(error_of(R"({"architectures": [], )" + body + "}").message(),
            "c: architectures: expected a non-empty array of strings");
  EXPECT_EQ(error_of(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 1024.5,
      "intermediate_size": 4096, "num_hidden_layers": 4, "num_attention_heads": 8,
      "vocab_size": 32000})").message(),
            "c: hidden_size: expected an integer, got 1.0245E3");
  // A whole number too large for an integer is refused, not converted (the
  // fuzz target's find: 6.7e75 cast to int64 is undefined behaviour).
  EXPECT_EQ(error_of(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 6.7e75,
      "intermediate_size": 4096, "num_hidden_layers": 4, "num_attention_heads": 8,
      "vocab_size": 32000})").message(),
            "c: hidden_size: must be an integer in [0, 2^31), got 6.7E75");
  EXPECT_EQ(error_of(R"({"architectures": ["LlamaForCausalLM"], "tie_word_embeddings": "no", )" +
                     body + "}").message(),
            "c: tie_word_embeddings: expected true or false, got \"no\"");
  EXPECT_EQ(error_of(R"({"architectures": ["Llama4ForConditionalGeneration"]})").message(),
            "c: text_config: expected an object (the language model)");
  // An unknown key is a warning, not an error; null is absent.
  Result<boost::json::value> v = json::parse(
      R"({"architectures": ["MistralForCausalLM"], "sliding_window": null, "fancy_new_thing": 3, )" +
          body + "}",
      "c");
  ASSERT_TRUE(v.ok());
  Result<HfModel> hf = model_from_hf_config(v.value(), "c");
  ASSERT_TRUE(hf.ok()) << hf.status().message();
  EXPECT_EQ(hf->model.sliding_window, 0);
  EXPECT_TRUE(contains(hf->warnings, "fancy_new_thing"));
}

TEST(HfConfig, AMisspeltShapingKeyIsAnErrorSuggestingTheKey) {
  // Issue 48, item 6: num_key_value_hea5ds was a warning, and the model
  // silently took 8 kv heads (num_attention_heads) instead of 2.
  const std::string body = R"("hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 4,
      "num_attention_heads": 8, "vocab_size": 32000)";
  const std::string llama = R"({"architectures": ["LlamaForCausalLM"], )";
  EXPECT_EQ(error_of(llama + R"("num_key_value_hea5ds": 2, )" + body + "}").message(),
            "c: num_key_value_hea5ds: unknown key; did you mean \"num_key_value_heads\"? (it "
            "shapes the model and is absent, so its default would be used; correct the key, or "
            "remove it)");
  // A swap of neighbours, a dropped letter, another case: one edit each.
  for (const char* typo : {"num_key_value_haeds", "num_key_value_head", "Num_Key_Value_Heads"}) {
    const std::string m = error_of(llama + "\"" + typo + "\": 2, " + body + "}").message();
    EXPECT_NE(m.find("did you mean \"num_key_value_heads\""), std::string::npos) << typo << ": " << m;
  }
  // Inside Llama 4's text_config the key's path says so.
  const std::string text_config = R"("hidden_size": 1024, "intermediate_size": 4096,
      "intermediate_size_mlp": 4096, "num_hidden_layers": 4, "num_attention_heads": 8,
      "vocab_size": 32000, "num_local_experts": 4, "num_experts_per_tok": 1)";
  const std::string nested =
      error_of(R"({"architectures": ["Llama4ForConditionalGeneration"], "text_config": {)" +
               text_config + R"(, "num_key_value_hea5ds": 2}})")
          .message();
  EXPECT_EQ(nested.rfind("c: text_config.num_key_value_hea5ds: unknown key; did you mean "
                         "\"num_key_value_heads\"?",
                         0),
            0u)
      << nested;
  // A required key that is missing names a near key the config has.
  EXPECT_EQ(error_of(llama + R"("hidden_sise": 1024, "intermediate_size": 4096,
      "num_hidden_layers": 4, "num_attention_heads": 8, "vocab_size": 32000})")
                .message(),
            "c: hidden_size: missing (required for this architecture); the config has "
            "\"hidden_sise\": a misspelling?");
  // Not a misspelling: the near key is given too, or nothing is near.
  for (const std::string extra : {R"("num_key_value_heads": 2, "num_key_value_heads_x": 3, )",
                                  R"("my_training_note": 1, )"}) {
    Result<boost::json::value> v = json::parse(llama + extra + body + "}", "c");
    ASSERT_TRUE(v.ok());
    Result<HfModel> hf = model_from_hf_config(v.value(), "c");
    EXPECT_TRUE(hf.ok()) << extra << ": " << hf.status().message();
  }
}

}  // namespace
}  // namespace llmplan::simulator

#include "simulator/model_json.h"

#include <gtest/gtest.h>

#include "base/strict_json.h"
#include "tests/simulator/test_cluster.h"

namespace llmplan::simulator {
namespace {

using testing::parse_json;

Model llama_like() {
  Model m = testing::modern_model("llama-ish", 32, 4096, 32, 14336, 8192, 128256);
  m.num_kv_heads = 8;
  return m;
}

TEST(ModelJson, RoundTripsEveryField) {
  const Model m = llama_like();
  Model back;
  ASSERT_TRUE(apply_model_json(model_to_json(m), "m", &back).ok());
  EXPECT_EQ(back, m);
}

// A model whose kv_heads, ffn_hidden and expert width are defaulted (0 in
// the struct) is written with the widths the simulator uses and reads back
// to the same shapes: this is the round trip the config and report JSON take.
TEST(ModelJson, RoundTripsDefaultedWidthsResolved) {
  Model m = testing::modern_model("defaults", 4, 1024, 16, 0, 2048, 32000);
  m.num_kv_heads = 0;
  m.ffn_hidden_size = 0;
  m.num_experts = 8;
  m.moe_top_k = 2;
  m.moe_ffn_hidden_size = 0;
  const boost::json::object o = model_to_json(m).as_object();
  EXPECT_EQ(o.at("kv_heads").as_int64(), 16);
  EXPECT_EQ(o.at("ffn_hidden").as_int64(), 4 * 1024);
  EXPECT_EQ(o.at("expert_ffn_hidden").as_int64(), 4 * 1024);
  Model back;
  ASSERT_TRUE(apply_model_json(o, "m", &back).ok());
  EXPECT_NE(back, m);  // the struct's 0s are now explicit widths ...
  EXPECT_EQ(back, m.with_resolved_widths());  // ... and the same widths
  EXPECT_EQ(back.kv_heads(), m.kv_heads());
  EXPECT_EQ(back.ffn_hidden(), m.ffn_hidden());
  EXPECT_EQ(back.moe_ffn_hidden(), m.moe_ffn_hidden());
  EXPECT_EQ(back.parameter_count(), m.parameter_count());
}

TEST(ModelJson, AppliesOnlyTheFieldsPresent) {
  Model m = llama_like();
  ASSERT_TRUE(apply_model_json(parse_json(R"({"seq": 2048, "activation": "gelu"})"), "m", &m).ok());
  Model expected = llama_like();
  expected.seq_length = 2048;
  expected.activation = Activation::kGelu;
  EXPECT_EQ(m, expected);
}

TEST(ModelJson, AcceptsNumbersWithProvenance) {
  Model m;
  Status s = apply_model_json(
      parse_json(R"({"layers": {"value": 12, "source": "paper"}, "source": "x", "note": "y"})"),
      "m", &m);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(m.num_layers, 12);
}

TEST(ModelJson, ErrorsNameTheField) {
  struct Case {
    const char* json;
    const char* message;
  };
  const Case cases[] = {
      {R"({"layerz": 3})", "cfg: model: unknown key \"layerz\""},
      {R"({"hidden": "big"})", "cfg: model.hidden: expected an integer, got a string"},
      {R"({"heads": 1.5})", "cfg: model.heads: expected an integer, got the number 1.5"},
      {R"({"layers": 0})", "cfg: model.layers: must be >= 1, got 0"},
      {R"({"kv_heads": -2})", "cfg: model.kv_heads: must be >= 1, got -2"},
      // An explicit 0 is not "the default" (issue 48, item 3): omit the key.
      {R"({"kv_heads": 0})", "cfg: model.kv_heads: must be >= 1, got 0"},
      {R"({"ffn_hidden": 0})", "cfg: model.ffn_hidden: must be >= 1, got 0"},
      {R"({"expert_ffn_hidden": 0})", "cfg: model.expert_ffn_hidden: must be >= 1, got 0"},
      {R"({"vocab": -1})", "cfg: model.vocab: must be >= 1, got -1"},
      {R"({"activation": "relu"})",
       "cfg: model.activation: unknown value \"relu\" (expected one of: gelu, swiglu, squared_relu)"},
      {R"({"tied_embeddings": 1})", "cfg: model.tied_embeddings: expected true or false"},
      {R"({"seq": {"value": 5, "sauce": "typo"}})", "cfg: model.seq: unknown key \"sauce\""},
      {R"([1, 2])", "cfg: model: expected an object, got an array"},
  };
  for (const Case& c : cases) {
    Model m = llama_like();
    Status s = apply_model_json(parse_json(c.json), "cfg: model", &m);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.json;
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s.message();
    EXPECT_EQ(m, llama_like()) << "left unchanged on error: " << c.json;
  }
}

}  // namespace
}  // namespace llmplan::simulator

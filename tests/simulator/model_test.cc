#include "simulator/model.h"

#include <gtest/gtest.h>

#include "tests/simulator/test_models.h"

namespace llmplan::simulator {
namespace {

// testing::gpt() without a name.
Model gpt(int l, int h, int a, int s, int V) {
  Model m = testing::gpt(l, h, a, s, V);
  m.name.clear();
  return m;
}

TEST(Model, ParameterCountMatchesGptFormula) {
  // P = 12 l h^2 (1 + 13/(12h) + (V+s)/(12 l h)), plus the final LayerNorm (2h).
  for (const Model& m : {gpt(96, 12288, 96, 2048, 50257), gpt(105, 20480, 128, 2048, 50257),
                         gpt(24, 1024, 16, 1024, 50257)}) {
    const double l = m.num_layers, h = m.hidden_size, s = m.seq_length, V = m.vocab_size;
    const double formula = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h)) + 2 * h;
    EXPECT_DOUBLE_EQ(static_cast<double>(m.parameter_count()), formula) << m.hidden_size;
  }
  // GPT-3 175B is 174.6e9 parameters (Brown et al. 2020 round it to 175B).
  EXPECT_NEAR(gpt(96, 12288, 96, 2048, 50257).parameter_count() / 1e9, 174.6, 0.1);
}

TEST(Model, FlopsMatchMegatronFormula) {
  const Model m = gpt(96, 12288, 96, 2048, 50257);
  const double B = 1536, s = 2048, l = 96, h = 12288, V = 50257;
  const double formula = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  EXPECT_NEAR(m.model_flops_per_step(1536) / formula, 1.0, 1e-12);
}

TEST(Model, LlamaStyleCounts) {
  // Llama-2 7B: 32 layers, h 4096, 32 heads, SwiGLU 11008, V 32000, untied,
  // rotary, RMSNorm, no biases: 6,738,415,616 parameters.
  Model m = gpt(32, 4096, 32, 4096, 32000);
  m.ffn_hidden_size = 11008;
  m.activation = Activation::kSwiglu;
  m.positions = PositionEmbedding::kRotary;
  m.tied_embeddings = false;
  m.linear_bias = false;
  EXPECT_EQ(m.parameter_count(), 6738415616LL);
}

TEST(Model, ValidateNamesTheField) {
  Model m = gpt(0, 1024, 16, 1024, 50257);
  EXPECT_NE(validate(m).message().find("model.layers"), std::string::npos);
  m = gpt(2, 1000, 16, 1024, 50257);
  EXPECT_NE(validate(m).message().find("model.heads"), std::string::npos);
  m = gpt(2, 1024, 16, 1024, 50257);
  m.num_kv_heads = 3;
  EXPECT_NE(validate(m).message().find("model.kv_heads"), std::string::npos);
  EXPECT_TRUE(validate(gpt(2, 1024, 16, 1024, 50257)).ok());
}

}  // namespace
}  // namespace llmplan::simulator

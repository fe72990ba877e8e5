#include "scaling/flops.h"

#include <gtest/gtest.h>

#include "simulator/model.h"

namespace llmplan::scaling {
namespace {

const TransformerShape kGpt3{96, 12288, 2048, 50257};

TEST(Flops, SixNDByHand) {
  // Chinchilla: 70B parameters on 1.4T tokens is 5.88e23 FLOPs.
  EXPECT_DOUBLE_EQ(flops_6nd(70e9, 1.4e12), 5.88e23);
  Result<double> c = training_flops({1, 1, 1, 1}, 10, FlopCount::kSixND);
  ASSERT_TRUE(c.ok());
  // P of l=h=s=V=1: 12 (1 + 13/12 + 2/12) = 27.
  EXPECT_DOUBLE_EQ(*c, 6 * 27 * 10);
}

TEST(Flops, Gpt3ParameterCountAndDetailedCount) {
  EXPECT_NEAR(parameter_count(kGpt3), 174604234752.0, 1.0);
  // 72 l h^2 = 1.04364e12, attention 12 l s h = 2.8991e10, logits 6 V h = 3.7053e9.
  EXPECT_NEAR(detailed_flops_per_token(kGpt3), 1076373430272.0, 1.0);
  const double tokens = 300e9;
  const double six_nd = training_flops(kGpt3, tokens, FlopCount::kSixND).value();
  const double detailed = training_flops(kGpt3, tokens, FlopCount::kDetailed).value();
  EXPECT_NEAR(six_nd, 6 * 174604234752.0 * tokens, 1e12);
  EXPECT_NEAR(detailed, 1076373430272.0 * tokens, 1e12);
  // Attention and logits add ~2.7% at s = 2048 for this width.
  EXPECT_NEAR(detailed / six_nd, 1.0274, 1e-3);
}

TEST(Flops, DetailedCountMatchesSimulatorModel) {
  simulator::Model m;
  m.num_layers = 24;
  m.hidden_size = 2048;
  m.num_heads = 16;
  m.seq_length = 4096;
  m.vocab_size = 51200;
  const TransformerShape shape{24, 2048, 4096, 51200};
  const int64_t batch = 512;
  EXPECT_NEAR(detailed_flops_per_token(shape) * batch * 4096 / m.model_flops_per_step(batch), 1.0,
              1e-12);
}

TEST(Flops, BadInputs) {
  EXPECT_NE(validate(TransformerShape{0, 1, 1, 1}).message().find("shape.layers"),
            std::string::npos);
  EXPECT_NE(
      training_flops({1, 1, 1, -3}, 1, FlopCount::kDetailed).status().message().find("shape.vocab"),
      std::string::npos);
  EXPECT_NE(training_flops(kGpt3, -1, FlopCount::kSixND).status().message().find("tokens"),
            std::string::npos);
  EXPECT_EQ(parse_flop_count("detailed").value(), FlopCount::kDetailed);
  EXPECT_EQ(parse_flop_count("6nd").value(), FlopCount::kSixND);
  EXPECT_FALSE(parse_flop_count("7nd").ok());
}

}  // namespace
}  // namespace llmplan::scaling

// The uneven pipeline layout with the first and the last chunk set apart
// (Plan::pipeline_first_chunk_layers / pipeline_last_chunk_layers;
// Megatron-Core's pipeline_model_parallel_layout as DeepSeek-V3's recipes
// use it).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "simulator/memory.h"
#include "simulator/plan.h"
#include "simulator/plan_json.h"
#include "simulator/simulate.h"
#include "tests/simulator/test_cluster.h"

namespace llmplan::simulator {
namespace {

Plan pipeline_plan(int p, int v) {
  Plan plan;
  plan.pipeline_parallel = p;
  plan.virtual_stages = v;
  plan.schedule = v > 1 ? Schedule::kInterleaved : Schedule::kOneFOneB;
  plan.global_batch_size = 64;
  return plan;
}

// DeepSeek-V3's "Et*4|(t*4|)*14tmL" over PP 4 x VP 4: 4 layers in the first
// chunk, 4 in each of the 14 middle ones, 1 in the last (61 in all).
TEST(PipelineLayout, LayersPerChunkFollowTheLayout) {
  const Model m = testing::gpt(61, 1024, 8, 1024);
  Plan p = pipeline_plan(4, 4);
  ASSERT_TRUE(validate(m, p).ok());
  EXPECT_EQ(layers_in_chunk(m, p, 0), 3);  // the even split: 61 = 16 x 3 + 13
  p.pipeline_first_chunk_layers = 4;
  p.pipeline_last_chunk_layers = 1;
  ASSERT_TRUE(validate(m, p).ok()) << validate(m, p).message();
  EXPECT_EQ(layers_in_chunk(m, p, 0), 4);
  for (int c = 1; c < 15; ++c) EXPECT_EQ(layers_in_chunk(m, p, c), 4) << c;
  EXPECT_EQ(layers_in_chunk(m, p, 15), 1);
  int total = 0;
  for (int c = 0; c < 16; ++c) {
    EXPECT_EQ(first_layer_of_chunk(m, p, c), total) << c;
    total += layers_in_chunk(m, p, c);
  }
  EXPECT_EQ(total, 61);
  // 62 layers: 57 over 14 middle chunks, the last middle chunk one more.
  Model m62 = m;
  m62.num_layers = 62;
  EXPECT_EQ(layers_in_chunk(m62, p, 13), 4);
  EXPECT_EQ(layers_in_chunk(m62, p, 14), 5);
  total = 0;
  for (int c = 0; c < 16; ++c) {
    EXPECT_EQ(first_layer_of_chunk(m62, p, c), total) << c;
    total += layers_in_chunk(m62, p, c);
  }
  EXPECT_EQ(total, 62);
  // "Et|(tt|)*30mL" (the H100 preset, 32 chunks): the last chunk holds no layer.
  p = pipeline_plan(8, 4);
  p.pipeline_first_chunk_layers = 1;
  p.pipeline_last_chunk_layers = 0;
  ASSERT_TRUE(validate(m, p).ok()) << validate(m, p).message();
  EXPECT_EQ(layers_in_chunk(m, p, 1), 2);
  EXPECT_EQ(layers_in_chunk(m, p, 31), 0);
}

TEST(PipelineLayout, BadLayoutsNameTheField) {
  const Model m = testing::gpt(61, 1024, 8, 1024);
  auto message = [&](const Plan& p) {
    const Status s = validate(m, p);
    EXPECT_FALSE(s.ok());
    return s.message();
  };
  Plan p = pipeline_plan(4, 4);
  p.pipeline_first_chunk_layers = 4;  // the last one missing
  EXPECT_NE(message(p).find("plan.pipeline_first_chunk_layers"), std::string::npos);
  p.pipeline_last_chunk_layers = 50;  // 7 left for 14 middle chunks
  EXPECT_NE(message(p).find("leave 7 for the 14 middle"), std::string::npos) << message(p);
  p.pipeline_last_chunk_layers = 1;
  p.account_for_loss_in_pipeline_split = true;
  EXPECT_NE(message(p).find("alternatives"), std::string::npos);
  Plan one = pipeline_plan(1, 1);
  one.pipeline_first_chunk_layers = 30;
  one.pipeline_last_chunk_layers = 31;
  EXPECT_NE(message(one).find(">= 2 pipeline chunks"), std::string::npos);
  Plan two = pipeline_plan(2, 1);
  two.pipeline_first_chunk_layers = 30;
  two.pipeline_last_chunk_layers = 30;  // one layer would be in no chunk
  EXPECT_FALSE(validate(m, two).ok());
  two.pipeline_last_chunk_layers = 31;
  EXPECT_TRUE(validate(m, two).ok());
}

TEST(PipelineLayout, JsonRoundTrip) {
  Plan p = pipeline_plan(4, 4);
  EXPECT_FALSE(plan_to_json(p).as_object().contains("pipeline_first_chunk_layers"));
  p.pipeline_first_chunk_layers = 4;
  p.pipeline_last_chunk_layers = 1;
  Plan back;
  ASSERT_TRUE(apply_plan_json(plan_to_json(p), "plan", &back).ok());
  EXPECT_EQ(back, p);
}

// Sign and size, by hand: 12 equal layers over 4 stages (1F1B, 64
// micro-batches, GEMMs only: every layer costs the same, the logits
// nothing) take 3 layers per stage: the step is the fill (the 4 stages' 3
// layers each, 12) plus 63 passes of the slowest stage (3): 201 layer
// passes. The layout 4 | 3 | 3 | 2 fills with 12 too but paces at 4: 12 +
// 63 x 4 = 264, 1.313x as long.
TEST(PipelineLayout, SlowestStageSetsTheStep) {
  const Model m = testing::gpt(12, 2048, 16, 2048, 1024);
  const Cluster c = testing::a100_cluster();
  SimOptions options;
  options.cost_model = std::make_shared<testing::GemmOnlyCost>();
  Plan even = pipeline_plan(4, 1);
  Plan uneven = even;
  uneven.pipeline_first_chunk_layers = 4;
  uneven.pipeline_last_chunk_layers = 2;
  ASSERT_TRUE(validate(m, uneven).ok()) << validate(m, uneven).message();
  Result<StepReport> a = simulate(m, even, c, options);
  Result<StepReport> b = simulate(m, uneven, c, options);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  ASSERT_EQ(b->stages.size(), 4u);
  EXPECT_EQ(b->stages[0].layers, 4);
  EXPECT_EQ(b->stages[1].layers, 3);
  EXPECT_EQ(b->stages[3].layers, 2);
  EXPECT_NEAR(b->iteration_time_s / a->iteration_time_s, 264.0 / 201.0, 0.02);
}

}  // namespace
}  // namespace llmplan::simulator

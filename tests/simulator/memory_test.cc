#include "simulator/memory.h"

#include <gtest/gtest.h>

#include "tests/simulator/test_cluster.h"

namespace llmplan::simulator {
namespace {

// Korthikanti et al. 2022, Table 2 (GPT, f = 4h, no GQA).
TEST(Memory, ActivationsMatchKorthikanti) {
  const Model m = testing::gpt(96, 12288, 96, 2048);
  const double s = 2048, h = 12288, a = 96, b = 1;
  Plan plan;
  plan.flash_attention = false;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, plan), s * b * h * (34 + 5 * a * s / h));
  plan.tensor_parallel = 8;
  const double t = 8;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, plan), s * b * h * (10 + 24 / t + 5 * a * s / (h * t)));
  plan.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, plan), s * b * h / t * (34 + 5 * a * s / h));
  plan.recompute = Recompute::kSelective;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, plan), s * b * h / t * 34);
  plan.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, plan), 2 * s * b * h / t);
  plan.recompute = Recompute::kNone;
  plan.flash_attention = true;  // flash attention stores no s x s scores either
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, plan), s * b * h / t * 34);
}

TEST(Memory, OptimizerStateBytes) {
  Plan plan;
  plan.data_parallel = 8;
  EXPECT_DOUBLE_EQ(state_bytes_per_parameter(plan), 18);
  plan.distributed_optimizer = true;
  EXPECT_DOUBLE_EQ(state_bytes_per_parameter(plan), 6 + 12.0 / 8);
}

TEST(Memory, OneFOneBKeepsUpToPMicroBatchesOnTheFirstStage) {
  const Model m = testing::gpt(8, 1024, 16, 1024);
  Plan plan;
  plan.pipeline_parallel = 4;
  plan.global_batch_size = 16;
  const std::vector<MemoryBreakdown> mem = stage_memory(m, plan, {1e6, 1e6, 1e6, 1e6}, 0);
  EXPECT_EQ(mem[0].in_flight_micro_batches, 4);
  EXPECT_EQ(mem[3].in_flight_micro_batches, 1);
  plan.schedule = Schedule::kGpipe;
  EXPECT_EQ(stage_memory(m, plan, {1e6, 1e6, 1e6, 1e6}, 0)[3].in_flight_micro_batches, 16);
  EXPECT_DOUBLE_EQ(mem[1].weights_and_optimizer_bytes, 18e6);
  const double per_layer = layer_activation_bytes(m, plan);
  EXPECT_DOUBLE_EQ(mem[2].activation_bytes, 2 * 2 * per_layer);
}

}  // namespace
}  // namespace llmplan::simulator

// Issue #26 (GB200 memory): bf16 gradients (Plan::grad_reduce_in_fp32) and
// Megatron-Core's embedding- / loss-aware pipeline split
// (Plan::account_for_embedding_in_pipeline_split / _loss_).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "simulator/memory.h"
#include "simulator/plan.h"
#include "simulator/simulate.h"
#include "tests/simulator/test_cluster.h"

namespace llmplan::simulator {
namespace {

// Llama 3.1 405B's shape (126 layers, hidden 16384, GQA 8, SwiGLU 53248).
Model llama405b() {
  Model m = testing::gpt(126, 16384, 128, 8192, 128256);
  m.num_kv_heads = 8;
  m.ffn_hidden_size = 53248;
  m.activation = Activation::kSwiglu;
  m.tied_embeddings = false;
  return m;
}

// The published GB200 layout of the 405B rows: TP 4, PP 16, VP 4 or 8, DP 4.
Plan gb200_405b_plan(int vp) {
  Plan p;
  p.tensor_parallel = 4;
  p.pipeline_parallel = 16;
  p.virtual_stages = vp;
  p.data_parallel = 4;
  p.global_batch_size = 1536;
  p.schedule = Schedule::kInterleaved;
  p.sequence_parallel = true;
  p.distributed_optimizer = true;
  p.dropout = false;
  p.precision = Precision::kFp8;
  p.fp8_recipe = Fp8Recipe::kCurrent;
  return p;
}

TEST(GradReduceInBf16, StateBytesLoseTwoPerParameterOfGradient) {
  Plan plan;
  plan.data_parallel = 8;
  plan.global_batch_size = 8;
  plan.grad_reduce_in_fp32 = false;
  EXPECT_DOUBLE_EQ(state_bytes_per_parameter(plan), 16);  // 2 weight + 2 grad + 12 Adam
  plan.distributed_optimizer = true;
  EXPECT_DOUBLE_EQ(state_bytes_per_parameter(plan), 4 + 12.0 / 8);
  plan.distributed_optimizer = false;
  plan.zero_stage = 2;
  EXPECT_DOUBLE_EQ(state_bytes_per_parameter(plan), 2 + 14.0 / 8);
  plan.zero_stage = 3;
  EXPECT_DOUBLE_EQ(state_bytes_per_parameter(plan), 14.0 / 8);
  // The data-parallel reduction moves 2-byte elements (fp16 already did).
  EXPECT_EQ(plan.grad_reduce_bytes(), 2);
  plan.grad_reduce_in_fp32 = true;
  EXPECT_EQ(plan.grad_reduce_bytes(), 4);
}

TEST(GradReduceInBf16, Llama405bStageStateShrinksByTwoBytesPerParameter) {
  const Model m = llama405b();
  Plan fp32 = gb200_405b_plan(4);
  fp32.account_for_embedding_in_pipeline_split = true;
  fp32.account_for_loss_in_pipeline_split = true;
  ASSERT_TRUE(validate(m, fp32).ok());
  Plan bf16 = fp32;
  bf16.grad_reduce_in_fp32 = false;
  const std::vector<double> params = stage_parameters_per_device(m, fp32);
  const std::vector<MemoryBreakdown> a = stage_memory(m, fp32, params, 0);
  const std::vector<MemoryBreakdown> b = stage_memory(m, bf16, params, 0);
  // Stage 1 holds 8 layers of 3.19e9 / 4 parameters: about 6.4e9, so 12.8 GB.
  EXPECT_NEAR(params[1], 6.375e9, 0.01e9);
  EXPECT_DOUBLE_EQ(a[1].weights_and_optimizer_bytes - b[1].weights_and_optimizer_bytes,
                   2.0 * params[1]);
  EXPECT_DOUBLE_EQ(a[1].activation_bytes, b[1].activation_bytes);
}

TEST(AccountedPipelineSplit, LayersPerChunkFollowMegatronCore) {
  const Model m = llama405b();
  Plan p = gb200_405b_plan(8);  // 128 chunks for 126 layers
  EXPECT_FALSE(validate(m, p).ok());
  p.account_for_embedding_in_pipeline_split = true;
  p.account_for_loss_in_pipeline_split = true;
  ASSERT_TRUE(validate(m, p).ok()) << validate(m, p).message();
  // (126 + 2) / 128 = 1: the first chunk holds only the embedding, the last
  // only the output layer and the loss.
  EXPECT_EQ(layers_in_chunk(m, p, 0), 0);
  EXPECT_EQ(layers_in_chunk(m, p, 1), 1);
  EXPECT_EQ(layers_in_chunk(m, p, 126), 1);
  EXPECT_EQ(layers_in_chunk(m, p, 127), 0);
  int total = 0;
  for (int c = 0; c < 128; ++c) {
    EXPECT_EQ(first_layer_of_chunk(m, p, c), total) << c;
    total += layers_in_chunk(m, p, c);
  }
  EXPECT_EQ(total, 126);
  // VP 4: (126 + 2) / 64 = 2, one fewer in the first and the last chunk.
  p.virtual_stages = 4;
  EXPECT_EQ(layers_in_chunk(m, p, 0), 1);
  EXPECT_EQ(layers_in_chunk(m, p, 1), 2);
  EXPECT_EQ(layers_in_chunk(m, p, 63), 1);
  // Without the split the remainder goes to the last chunks instead.
  Plan plain = p;
  plain.account_for_embedding_in_pipeline_split = false;
  plain.account_for_loss_in_pipeline_split = false;
  EXPECT_EQ(layers_in_chunk(m, plain, 0), 1);
  EXPECT_EQ(layers_in_chunk(m, plain, 1), 1);
  EXPECT_EQ(layers_in_chunk(m, plain, 63), 2);
  // Only the embedding: 127 layers-worth do not divide over 64 chunks.
  p.account_for_loss_in_pipeline_split = false;
  const Status s = validate(m, p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("plan.account_for_embedding_in_pipeline_split"), std::string::npos)
      << s.message();
  // 127 layers with the embedding only: 128 / 64 = 2, the first chunk 1.
  Model m127 = m;
  m127.num_layers = 127;
  ASSERT_TRUE(validate(m127, p).ok());
  EXPECT_EQ(layers_in_chunk(m127, p, 0), 1);
  EXPECT_EQ(layers_in_chunk(m127, p, 63), 2);
}

TEST(AccountedPipelineSplit, ChunksWithoutLayersSimulate) {
  const Model m = llama405b();
  Plan p = gb200_405b_plan(8);
  p.account_for_embedding_in_pipeline_split = true;
  p.account_for_loss_in_pipeline_split = true;
  p.precision = Precision::kBf16;  // the hand-written A100 cluster has no FP8
  const Cluster c = testing::a100_cluster();
  Result<StepReport> r = simulate(m, p, c);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_GT(r->iteration_time_s, 0);
  // Stage 0 holds the embedding chunk (no layer) and 7 one-layer chunks.
  ASSERT_EQ(r->stages.size(), 16u);
  EXPECT_EQ(r->stages[0].layers, 7);
  EXPECT_EQ(r->stages[1].layers, 8);
  EXPECT_EQ(r->stages[15].layers, 7);
}

}  // namespace
}  // namespace llmplan::simulator

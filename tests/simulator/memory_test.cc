#include "simulator/memory.h"

#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "simulator/schedule.h"
#include "tests/simulator/expect_rel.h"
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
  plan.flash_attention = true;  // flash attention stores no s x s scores either,
  // only its fp32 softmax statistics (log-sum-exp): 4 bytes per head and token.
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, plan), s * b * h / t * (34 + 4 * a / h));
}

// The same formulas worked by hand for a small shape, micro-batch 4.
TEST(Memory, ActivationsByHand) {
  const Model m = testing::gpt(4, 1024, 16, 512);  // s b h = 512 * 4 * 1024 = 2097152
  Plan plan;
  plan.micro_batch_size = 4;
  plan.flash_attention = false;
  // 34 s b h + 5 a s^2 b = 71303168 + 5*16*512*512*4 = 71303168 + 83886080.
  EXPECT_REL(layer_activation_bytes(m, plan), 155189248.0);
  plan.recompute = Recompute::kSelective;  // drops 5 a s^2 b
  EXPECT_REL(layer_activation_bytes(m, plan), 71303168.0);
  plan.recompute = Recompute::kFull;  // 2 s b h
  EXPECT_REL(layer_activation_bytes(m, plan), 4194304.0);
  plan.recompute = Recompute::kNone;
  plan.tensor_parallel = 4;  // (10 + 24/4) s b h + 5 a s^2 b / 4 = 33554432 + 20971520
  EXPECT_REL(layer_activation_bytes(m, plan), 54525952.0);
  plan.sequence_parallel = true;  // 34 s b h / 4 + 5 a s^2 b / 4 = 17825792 + 20971520
  EXPECT_REL(layer_activation_bytes(m, plan), 38797312.0);
  plan.recompute = Recompute::kFull;  // 2 s b h / 4
  EXPECT_REL(layer_activation_bytes(m, plan), 1048576.0);
  plan.recompute = Recompute::kNone;
  plan.flash_attention = true;  // no s^2 term: 34 s b h / 4 + the fp32 log-sum-exp 4 a s b / 4
  EXPECT_REL(layer_activation_bytes(m, plan), 17825792.0 + 32768.0);
  plan.dropout = false;  // no masks: 32 s b h / 4 (+ log-sum-exp)
  EXPECT_REL(layer_activation_bytes(m, plan), 16777216.0 + 32768.0);
}

// GQA and SwiGLU: Q 2, K and V 2 kv/a each, output 2, MLP 6 f/h, + 10 replicated.
TEST(Memory, ActivationsGqaSwiglu) {
  Model m = testing::gpt(4, 1024, 16, 512);
  m.num_kv_heads = 4;           // kv/a = 1/4: K + V = 1 (instead of 4)
  m.ffn_hidden_size = 2816;     // f/h = 2.75: 6 f/h = 16.5
  m.activation = Activation::kSwiglu;
  Plan plan;
  // (10 + 2 + 1 + 2 + 16.5) s b h = 31.5 * 524288, + the fp32 log-sum-exp:
  // 4 bytes x 16 heads per token = 4 * 16 / 1024 s b h.
  const double lse = 4.0 * 16 / 1024;
  EXPECT_REL(layer_activation_bytes(m, plan), (31.5 + lse) * 524288.0);
  plan.tensor_parallel = 2;  // 10 + (21.5 + lse) / 2
  EXPECT_REL(layer_activation_bytes(m, plan), (20.75 + lse / 2) * 524288.0);
}

TEST(Memory, StateBytesByZeroStage) {
  Plan plan;
  plan.data_parallel = 8;
  plan.global_batch_size = 8;
  EXPECT_DOUBLE_EQ(state_bytes_per_parameter(plan), 18);
  plan.distributed_optimizer = true;  // stage 1, unchanged from before
  EXPECT_DOUBLE_EQ(state_bytes_per_parameter(plan), 6 + 12.0 / 8);
  plan.distributed_optimizer = false;
  plan.zero_stage = 1;
  EXPECT_DOUBLE_EQ(state_bytes_per_parameter(plan), 7.5);
  plan.zero_stage = 2;
  EXPECT_DOUBLE_EQ(state_bytes_per_parameter(plan), 2 + 16.0 / 8);
  plan.zero_stage = 3;
  EXPECT_DOUBLE_EQ(state_bytes_per_parameter(plan), 2);
  plan.fsdp_group = 4;  // hybrid: sharded over 4, replicated across 2
  EXPECT_DOUBLE_EQ(state_bytes_per_parameter(plan), 4);
  plan.zero_stage = 1;
  EXPECT_DOUBLE_EQ(state_bytes_per_parameter(plan), 9);
}

// Published per-parameter state figures.
//  - Megatron-LM's distributed-optimizer documentation (docs/source/api-guide/
//    dist_optimizer.md, "theoretical number of bytes per parameter"):
//    bf16 parameters with fp32 gradients: 18 without, 6 + 12/d with the
//    distributed optimizer. Tolerance: exact.
//  - Rajbhandari et al. 2020 (ZeRO), Figure 1: a 7.5B-parameter model on
//    N_d = 64 GPUs with K = 12 needs 16.6 GB per GPU at P_os+g and 1.88 GB
//    at P_os+g+p (2-byte gradients). Tolerance 10 %: ours keep the sharded
//    gradients in fp32 at stage 2 (2 + 16/64 = 2.25 bytes against ZeRO's
//    2 + 14/64 = 2.22), exact at stage 3. (Its P_os figure, 31.4 GB, is
//    ZeRO's 2-byte gradients; Megatron-Core keeps a 4-byte buffer: 46.4 GB,
//    the documented framework difference, so not compared.)
TEST(Memory, PublishedStateFigures) {
  Plan plan;
  plan.data_parallel = 64;
  plan.global_batch_size = 64;
  EXPECT_DOUBLE_EQ(state_bytes_per_parameter(plan), 18);
  plan.distributed_optimizer = true;
  EXPECT_DOUBLE_EQ(state_bytes_per_parameter(plan), 6 + 12.0 / 64);
  plan.distributed_optimizer = false;
  const double psi = 7.5e9;
  plan.zero_stage = 2;
  EXPECT_NEAR(psi * state_bytes_per_parameter(plan), 16.6e9, 0.10 * 16.6e9);
  plan.zero_stage = 3;
  EXPECT_NEAR(psi * state_bytes_per_parameter(plan), 1.88e9, 0.10 * 1.88e9);
}

TEST(Memory, ShardedWorkingSet) {
  Plan plan;
  plan.data_parallel = 8;
  plan.global_batch_size = 8;
  EXPECT_DOUBLE_EQ(sharded_working_bytes(plan, 1e6, 10, 3e6), 0);
  plan.zero_stage = 1;
  EXPECT_DOUBLE_EQ(sharded_working_bytes(plan, 1e6, 10, 3e6), 0);
  plan.zero_stage = 2;  // (2 layers + root) x 2 bytes of gradient
  EXPECT_DOUBLE_EQ(sharded_working_bytes(plan, 1e6, 10, 3e6), 5e6 * 2);
  plan.zero_stage = 3;  // + 2 bytes of gathered parameter
  EXPECT_DOUBLE_EQ(sharded_working_bytes(plan, 1e6, 10, 3e6), 5e6 * 4);
  EXPECT_DOUBLE_EQ(sharded_working_bytes(plan, 1e6, 1, 0), 1e6 * 4);  // one layer only
}

TEST(Memory, FrameworkBuffers) {
  const double gib = 1024.0 * 1024 * 1024, mib = 1024.0 * 1024;
  Plan plan;
  EXPECT_DOUBLE_EQ(framework_buffer_bytes(plan), 0.5 * gib + 64 * mib);
  plan.data_parallel = 8;
  plan.tensor_parallel = 8;
  plan.global_batch_size = 8;
  EXPECT_DOUBLE_EQ(framework_buffer_bytes(plan), 1.5 * gib + 64 * mib);
  plan.tp_comm_overlap = true;
  EXPECT_DOUBLE_EQ(framework_buffer_bytes(plan), 2.0 * gib + 64 * mib);
}

TEST(Memory, OneFOneBKeepsUpToPMicroBatchesOnTheFirstStage) {
  const Model m = testing::gpt(8, 1024, 16, 1024);
  Plan plan;
  plan.pipeline_parallel = 4;
  plan.global_batch_size = 16;
  const std::vector<MemoryBreakdown> mem = stage_memory(m, plan, {1e6, 1e6, 1e6, 1e6}, 0);
  for (int r = 0; r < 4; ++r) EXPECT_EQ(mem[r].in_flight_micro_batches, 4 - r);  // p - r
  plan.schedule = Schedule::kGpipe;
  EXPECT_EQ(stage_memory(m, plan, {1e6, 1e6, 1e6, 1e6}, 0)[3].in_flight_micro_batches, 16);
  EXPECT_DOUBLE_EQ(mem[1].weights_and_optimizer_bytes, 18e6);
  const double per_layer = layer_activation_bytes(m, plan);
  EXPECT_DOUBLE_EQ(mem[2].activation_bytes, 2 * 2 * per_layer);
}

// Interleaving: the first stage holds (1 + (p-1)/(p v)) times the activations
// of l/p layers' worth of micro-batches (Korthikanti et al. 2022, section 4.2.3).
TEST(Memory, InterleavedFirstStageFactor) {
  const Model m = testing::gpt(16, 1024, 16, 1024);
  Plan plan;
  plan.pipeline_parallel = 4;
  plan.virtual_stages = 2;
  plan.schedule = Schedule::kInterleaved;
  plan.global_batch_size = 16;
  const std::vector<MemoryBreakdown> mem = stage_memory(m, plan, {1e6, 1e6, 1e6, 1e6}, 0);
  const double p = 4, v = 2, l = 16;
  const double per_layer = layer_activation_bytes(m, plan);
  // + the embedding dropout's 1-byte mask per micro-batch in flight in the
  // first chunk (7 of the 11 at the peak: forwards 0-3 and 8-10).
  EXPECT_EQ(peak_in_flight(plan, 0)[0], 7);
  const double embedding = 7 * 1024.0 * 1024 * 1;
  EXPECT_REL(mem[0].activation_bytes - embedding, per_layer * l * (1 + (p - 1) / (p * v)));
  EXPECT_EQ(mem[0].in_flight_micro_batches, 4 * 2 + 4 - 1);  // v p + p - 1 chunk passes
}

// Every term of one stage-3 device, by hand.
TEST(Memory, ZeroThreeTotalByHand) {
  const Model m = testing::gpt(4, 1024, 16, 512, 1000);
  Plan plan = testing::layout_plan(1, 1, 4, 8);
  plan.micro_batch_size = 2;
  plan.zero_stage = 3;
  plan.recompute = Recompute::kFull;
  const double layer = static_cast<double>(m.layer_parameters());
  const double root = 1e6;
  const MemoryBreakdown mb = stage_memory(m, plan, {4 * layer + root}, 0)[0];
  const double tokens = 1024, h = 1024;
  EXPECT_REL(mb.weights_and_optimizer_bytes, (4 * layer + root) * 16 / 4);
  EXPECT_REL(mb.sharded_working_bytes, (2 * layer + root) * 4);
  // The layer inputs of the 4 layers, + the embedding dropout's 1-byte mask.
  EXPECT_REL(mb.activation_bytes, 4 * 2 * tokens * h + tokens * h * 1);
  EXPECT_REL(mb.recompute_bytes, (34 + 4.0 * 16 / 1024) * tokens * h);  // + log-sum-exp
  EXPECT_REL(mb.logits_bytes, tokens * 1000 * 6);
  const double dynamic = mb.activation_bytes + mb.recompute_bytes + mb.logits_bytes + mb.sharded_working_bytes;
  EXPECT_REL(mb.fragmentation_bytes, kAllocatorFragmentation * dynamic);
  EXPECT_REL(mb.reserved_bytes, framework_buffer_bytes(plan));
  EXPECT_REL(mb.total_bytes(), mb.weights_and_optimizer_bytes + dynamic + mb.fragmentation_bytes +
                                   mb.reserved_bytes);
  plan.fused_cross_entropy = true;
  EXPECT_REL(stage_memory(m, plan, {4 * layer + root}, 0)[0].logits_bytes, tokens * 1000 * 2);
  EXPECT_REL(stage_memory(m, plan, {4 * layer + root}, 5e9)[0].reserved_bytes,
             framework_buffer_bytes(plan) + 5e9);
}

// ZeRO 2-3 with one pipeline stage: the word embedding's gradient is made by
// the backward's last op, after the stored activations are freed, so it is
// not in the working set at the peak; with tied embeddings (the output
// layer's gradient, made first) or on a pipeline's first stage it stays.
TEST(Memory, OneStageShardedPeakHoldsNoEmbeddingGradient) {
  Model m = testing::gpt(4, 1024, 16, 512, 1000);  // learned positions
  m.tied_embeddings = false;
  Plan plan;
  plan.data_parallel = 4;
  plan.global_batch_size = 8;
  plan.zero_stage = 3;
  const double layer = static_cast<double>(m.layer_parameters());
  const double embedding = 1000.0 * 1024 + 512.0 * 1024;  // words + positions
  const std::vector<double> params = stage_parameters_per_device(m, plan);
  const double root = params[0] - 4 * layer;
  ASSERT_GT(root, embedding);
  EXPECT_REL(stage_memory(m, plan, params, 0)[0].sharded_working_bytes,
             (2 * layer + root) * 4 - embedding * 2);
  plan.zero_stage = 2;
  EXPECT_REL(stage_memory(m, plan, params, 0)[0].sharded_working_bytes,
             (2 * layer + root) * 2 - embedding * 2);
  plan.zero_stage = 3;
  m.tied_embeddings = true;
  const std::vector<double> tied = stage_parameters_per_device(m, plan);
  EXPECT_REL(stage_memory(m, plan, tied, 0)[0].sharded_working_bytes,
             (2 * layer + tied[0] - 4 * layer) * 4);
  m.tied_embeddings = false;
  plan.pipeline_parallel = 2;
  plan.data_parallel = 2;
  const std::vector<double> two = stage_parameters_per_device(m, plan);
  const auto mem = stage_memory(m, plan, two, 0);
  EXPECT_REL(mem[0].sharded_working_bytes, (2 * layer + two[0] - 2 * layer) * 4);
}

// Megatron-FSDP with FP8 parameters (ZeRO-3, FP8 current scaling,
// Plan::fp8_param_gather): the layer weights' shard is 1 byte a parameter
// instead of 2, and the gathered layers hold the 1-byte fp8 data (plus its
// transpose where the FP8 GEMMs need one) instead of 2-byte bf16.
TEST(Memory, MegatronFsdpFp8ParametersAreOneByte) {
  const Model m = testing::gpt(4, 1024, 16, 512, 1000);  // tied: root unchanged
  Plan bf16_weights = testing::layout_plan(1, 1, 4, 8);
  bf16_weights.zero_stage = 3;
  bf16_weights.precision = Precision::kFp8;
  bf16_weights.fp8_recipe = Fp8Recipe::kCurrent;
  bf16_weights.fp8_param_gather = false;
  Plan fp8_weights = bf16_weights;
  fp8_weights.fp8_param_gather = true;
  const double layer = static_cast<double>(m.layer_parameters());
  const std::vector<double> params = stage_parameters_per_device(m, bf16_weights);
  const auto diff = [&](const Plan& a, const Plan& b, bool transpose) {
    const MemoryBreakdown x = stage_memory(m, a, params, 0, transpose)[0];
    const MemoryBreakdown y = stage_memory(m, b, params, 0, transpose)[0];
    return std::make_pair(x.weights_and_optimizer_bytes - y.weights_and_optimizer_bytes,
                          x.sharded_working_bytes - y.sharded_working_bytes);
  };
  // Blackwell (no transpose): shard 4 layers / 4 ranks, 2 gathered layers.
  auto d = diff(bf16_weights, fp8_weights, false);
  EXPECT_REL(d.first, 4 * layer / 4);
  EXPECT_REL(d.second, 2 * layer);
  // Hopper: the gathered fp8 data and its transpose, 2 bytes as bf16.
  d = diff(bf16_weights, fp8_weights, true);
  EXPECT_REL(d.first, 4 * layer / 4);
  EXPECT_DOUBLE_EQ(d.second, 0);
  // A bf16 last layer stays a bf16 parameter, gathered at 2 bytes.
  Plan last_bf16 = fp8_weights;
  last_bf16.bf16_layers_at_end = 1;
  Plan last_bf16_no_fp8 = last_bf16;
  last_bf16_no_fp8.fp8_param_gather = false;
  d = diff(last_bf16_no_fp8, last_bf16, false);
  EXPECT_REL(d.first, 3 * layer / 4);
  EXPECT_REL(d.second, layer);
  // MXFP8 keeps bf16 parameters; ZeRO-1's fp8 weights are counted apart.
  Plan mx = fp8_weights;
  mx.fp8_recipe = Fp8Recipe::kMxfp8;
  Plan mx_off = mx;
  mx_off.fp8_param_gather = false;
  d = diff(mx_off, mx, false);
  EXPECT_DOUBLE_EQ(d.first, 0);
  EXPECT_DOUBLE_EQ(d.second, 0);
}

// Published H100 runs (data/h100/published_runs.csv) that really ran on 80 GB
// GPUs: the tightest of the 79 dense BF16 rows under these formulas. Each must
// be predicted to fit.
Model mpt(int layers, int hidden, int heads, int seq) {
  Model m = testing::gpt(layers, hidden, heads, seq, 50368);  // learned positions, biases, tied
  return m;
}

Plan foundry(int gpus, int micro_batch, int global_batch, int zero, Recompute recompute) {
  Plan p = testing::layout_plan(1, 1, gpus, global_batch);
  p.micro_batch_size = micro_batch;
  p.zero_stage = zero;
  p.recompute = recompute;
  p.dropout = false;              // MPT: attn_pdrop = resid_pdrop = 0
  p.fused_cross_entropy = true;   // llm-foundry's default loss_fn
  return p;
}

double peak_bytes(const Model& m, const Plan& plan) {
  const int p = plan.pipeline_parallel, v = plan.virtual_stages, t = plan.tensor_parallel;
  std::vector<double> params(p, 0.0);
  for (int c = 0; c < p * v; ++c) {
    params[c % p] += static_cast<double>(m.layer_parameters()) / t * layers_in_chunk(m, plan, c);
  }
  params[0] += static_cast<double>(m.embedding_parameters()) / t;
  params[p - 1] += static_cast<double>(m.head_parameters()) / t;
  double peak = 0;
  for (const MemoryBreakdown& mb : stage_memory(m, plan, params, 0)) peak = std::max(peak, mb.total_bytes());
  return peak;
}

TEST(Memory, TightestPublishedH100RunsFit) {
  struct Run {
    const char* what;
    Model model;
    Plan plan;
    double above;  // the peak lies between this and 80 GB
  };
  const Run runs[] = {
      // mpt-3b, s 8192, 8 GPUs FULL_SHARD, micro-batch 3, no checkpointing: 78.1 GB.
      {"mpt-3b", mpt(32, 2560, 20, 8192), foundry(8, 3, 144, 3, Recompute::kNone), 77e9},
      // mpt-30b, s 8192, 8 GPUs FULL_SHARD, micro-batch 1, full checkpointing: 77.0 GB.
      {"mpt-30b s8192", mpt(48, 7168, 56, 8192), foundry(8, 1, 168, 3, Recompute::kFull), 76e9},
      // mpt-1b, s 2048, 16 GPUs FULL_SHARD, micro-batch 20: 75.5 GB.
      {"mpt-1b", mpt(24, 2048, 16, 2048), foundry(16, 20, 320, 3, Recompute::kNone), 74e9},
      // mpt-30b, s 2048, 8 GPUs FULL_SHARD, micro-batch 3, full checkpointing: 74.5 GB.
      {"mpt-30b s2048", mpt(48, 7168, 56, 2048), foundry(8, 3, 504, 3, Recompute::kFull), 73e9},
  };
  for (const Run& run : runs) {
    const double peak = peak_bytes(run.model, run.plan);
    EXPECT_LT(peak, 80e9) << run.what;
    EXPECT_GT(peak, run.above) << run.what;
  }
}

TEST(Memory, TightestMegatronH100RunFits) {
  // Megatron-LM weak scaling, GPT 462B: t 8, p 16, d 48, distributed
  // optimizer, micro-batch 1, s 4096, no recompute: 64.9 GB on the first stage.
  Model m = testing::gpt(112, 18432, 144, 4096, 131072);
  m.tied_embeddings = false;
  Plan plan = testing::layout_plan(8, 16, 48, 3072);
  plan.sequence_parallel = true;
  plan.distributed_optimizer = true;
  plan.tp_comm_overlap = true;
  const double peak = peak_bytes(m, plan);
  EXPECT_LT(peak, 80e9);
  EXPECT_GT(peak, 64e9);
}

TEST(Memory, SeventyBillionUnshardedOnEightGpusDoesNotFit) {
  Model m = testing::gpt(80, 8192, 64, 4096, 128256);
  m.num_kv_heads = 8;
  m.ffn_hidden_size = 28672;
  m.activation = Activation::kSwiglu;
  m.tied_embeddings = false;
  Plan plan = testing::layout_plan(1, 1, 8, 8);
  plan.recompute = Recompute::kFull;
  EXPECT_GT(peak_bytes(m, plan), 1000e9);  // 18 B x 70 B parameters
  plan.zero_stage = 3;                     // 16/8 B per parameter: 141 GB, still too much
  EXPECT_GT(peak_bytes(m, plan), 140e9);
}

// GPT-3 175B on 64 GPUs with t 8, p 1 and no sharding (ZeRO-0): 21.9 B
// parameters per GPU x 18 bytes = 394 GB, far beyond any 80 GB GPU.
TEST(Memory, GptThreeOnSixtyFourGpusTensorParallelOnlyDoesNotFit) {
  const Model m = testing::gpt(96, 12288, 96, 2048, 50257);
  Plan plan = testing::layout_plan(8, 1, 8, 8);
  plan.sequence_parallel = true;
  plan.recompute = Recompute::kFull;
  EXPECT_GT(peak_bytes(m, plan), 390e9);
  plan.distributed_optimizer = true;  // 6 + 12/8 bytes per parameter: 164 GB, still too much
  EXPECT_GT(peak_bytes(m, plan), 160e9);
}

}  // namespace
}  // namespace llmplan::simulator

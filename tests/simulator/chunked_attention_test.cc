// Chunked local attention (Llama 4): the span of chunked and global layers,
// model FLOPs, the flash-attention kernel against the project's H100
// profile (data/profiles/h100-sxm-2026-11-26-ssm-mla.pytorch.json), context
// parallelism, JSON keys and validation, and the Llama 4 presets' parameter
// counts against the published figures.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "presets/catalog.h"
#include "simulator/lowering.h"
#include "simulator/model_json.h"
#include "simulator/roofline.h"
#include "simulator/simulate.h"
#include "tests/simulator/test_models.h"
#include "tests/simulator/test_presets.h"

namespace llmplan::simulator {
namespace {

// Llama 4 Scout's attention (40 heads, 8 KV, head_dim 128, hidden 5120) on
// `layers` dense layers, chunk 8192, every 4th layer global.
Model scout_attention(int layers, int seq) {
  Model m = testing::modern_model("scout-attn", layers, 5120, 40, 16384, seq, 202048);
  m.num_kv_heads = 8;
  m.head_dim_size = 128;
  m.attention_chunk = 8192;
  m.global_attention_every = 4;
  return m;
}

TEST(ChunkedAttention, SpanOfChunkedAndGlobalLayers) {
  Model m = scout_attention(8, 32768);
  ASSERT_TRUE(validate(m).ok());
  // Layers 3 and 7 (i % 4 == 3) are global, the rest chunked.
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(m.is_chunked_layer(i), i % 4 != 3) << i;
    EXPECT_EQ(m.attention_span(i), i % 4 == 3 ? 32768 : 8192) << i;
  }
  // The chunk covers the sequence: every layer spans s.
  m.seq_length = 8192;
  EXPECT_EQ(m.attention_span(0), 8192);
  m.seq_length = 4096;
  EXPECT_EQ(m.attention_span(0), 4096);
  // A partial last chunk: 2 blocks of 8192^2 pairs + 3616^2, over 20000
  // queries = 7364.66 -> 7365 keys per query.
  m.seq_length = 20000;
  EXPECT_EQ(m.attention_span(0), 7365);
  // global_attention_every 0: every layer chunked.
  m.seq_length = 32768;
  m.global_attention_every = 0;
  EXPECT_EQ(m.attention_span(3), 8192);
}

TEST(ChunkedAttention, ModelFlopsCountTheChunkedSpan) {
  // Per token and layer the attention term is 4 span q (q = heads x d);
  // the rest of a layer does not depend on the span.
  const Model chunked = scout_attention(4, 32768);
  Model full = chunked;
  full.attention_chunk = 0;
  full.global_attention_every = 0;
  const double q = 40 * 128.0, s = 32768, B = 2;
  // 3 chunked layers of 4 x 8192 q instead of 4 x 32768 q, forward +
  // backward (x 3), B s tokens.
  const double saved = 3.0 * B * s * 3 * 4.0 * (32768 - 8192) * q;
  EXPECT_NEAR(full.model_flops_per_step(2) - chunked.model_flops_per_step(2), saved, saved * 1e-12);
}

// The forward and backward flash-attention ops of layer `layer` in a
// one-chunk program.
struct FlashTimes {
  double fwd_s = 0, bwd_s = 0, fwd_flops = 0;
};
FlashTimes flash_of_layer(const Model& m, const Plan& plan, const Cluster& cluster,
                          const CostModel& cost, int layer) {
  const ChunkProgram prog = lower_chunk(m, plan, place(plan, cluster), cost, 0);
  std::vector<const LoweredOp*> fwd, bwd;
  for (const LoweredOp& op : prog.forward) {
    if (std::string(op.name) == "flash_attention") fwd.push_back(&op);
  }
  for (const LoweredOp& op : prog.backward) {
    if (std::string(op.name) == "flash_attention") bwd.push_back(&op);
  }
  FlashTimes t;
  if (static_cast<int>(fwd.size()) != m.num_layers || static_cast<int>(bwd.size()) != m.num_layers) {
    ADD_FAILURE() << "expected one flash op per layer and pass";
    return t;
  }
  // The backward runs the layers in reverse.
  t.fwd_s = fwd[layer]->duration_s;
  t.fwd_flops = fwd[layer]->flops;
  t.bwd_s = bwd[m.num_layers - 1 - layer]->duration_s;
  return t;
}

Plan one_gpu_plan() {
  Plan plan;
  plan.micro_batch_size = 1;
  plan.global_batch_size = 1;
  plan.flash_attention = true;
  return plan;
}

TEST(ChunkedAttention, FlashKernelAgainstTheH100Profile) {
  // data/profiles/h100-sxm-2026-11-26-ssm-mla.pytorch.json,
  // "chunked_attention", op sdpa_cudnn, batch 1, 40 heads (8 KV), head_dim
  // 128, median times: full causal vs chunked_8192.
  struct Measured {
    int seq;
    double full_fwd_s, full_bwd_s, chunk_fwd_s, chunk_bwd_s;
  };
  const Measured rows[] = {
      {16384, 0.004322432041168212, 0.013302815914154054, 0.0023520960807800295,
       0.006929872035980224},
      {32768, 0.018605600357055663, 0.051033615112304684, 0.004382848024368287,
       0.014675760269165039},
  };
  const Cluster cluster = testing::preset_cluster("dgx-h100");
  const Roofline cost(cluster);
  const Plan plan = one_gpu_plan();
  for (const Measured& r : rows) {
    const Model m = scout_attention(4, r.seq);
    const FlashTimes chunk = flash_of_layer(m, plan, cluster, cost, 0);  // chunked
    const FlashTimes full = flash_of_layer(m, plan, cluster, cost, 3);   // global
    // FLOPs: 4 heads s span d forward.
    EXPECT_DOUBLE_EQ(chunk.fwd_flops, 4.0 * 40 * r.seq * 8192 * 128);
    EXPECT_DOUBLE_EQ(full.fwd_flops, 4.0 * 40 * r.seq * r.seq * 128);
    // The chunked kernel's share of the full one: measured 0.544 / 0.521
    // (fwd / bwd) at 16384 and 0.236 / 0.288 at 32768; predicted within
    // 15 % of it.
    const double fwd_ratio = chunk.fwd_s / full.fwd_s, bwd_ratio = chunk.bwd_s / full.bwd_s;
    EXPECT_NEAR(fwd_ratio / (r.chunk_fwd_s / r.full_fwd_s), 1.0, 0.15) << r.seq;
    EXPECT_NEAR(bwd_ratio / (r.chunk_bwd_s / r.full_bwd_s), 1.0, 0.15) << r.seq;
    // Absolute times are not asserted: the uncalibrated H100 roofline
    // (Roofline(dgx-h100)) predicts this kernel 2.2-2.7x slower than
    // cuDNN measured, for full and chunked masks alike (printed below).
    std::printf("seq %d: chunked fwd %.3f ms (measured %.3f), bwd %.3f (%.3f); full fwd %.3f (%.3f), bwd %.3f (%.3f)\n",
                r.seq, chunk.fwd_s * 1e3, r.chunk_fwd_s * 1e3, chunk.bwd_s * 1e3, r.chunk_bwd_s * 1e3,
                full.fwd_s * 1e3, r.full_fwd_s * 1e3, full.bwd_s * 1e3, r.full_bwd_s * 1e3);
  }
}

TEST(ChunkedAttention, ContextParallelSpreadsTheChunkOverTheBlocks) {
  // cp 2 at s 32768: each rank holds 16384 queries; a chunked layer's cp
  // blocks get chunk / cp keys each, so the rank's attention FLOPs are
  // 4 heads (s/cp) chunk d in all, half the cp-1 figure.
  const Cluster cluster = testing::preset_cluster("dgx-h100");
  const Roofline cost(cluster);
  const Model m = scout_attention(4, 32768);
  Plan one = one_gpu_plan();
  Plan two = one;
  two.context_parallel = 2;
  const FlashTimes a = flash_of_layer(m, one, cluster, cost, 0);
  const FlashTimes b = flash_of_layer(m, two, cluster, cost, 0);
  EXPECT_DOUBLE_EQ(a.fwd_flops, 4.0 * 40 * 32768 * 8192 * 128);
  EXPECT_DOUBLE_EQ(b.fwd_flops, a.fwd_flops / 2);
}

TEST(ChunkedAttention, JsonRoundTripAndValidation) {
  const Model m = scout_attention(8, 8192);
  Model back;
  ASSERT_TRUE(apply_model_json(model_to_json(m), "m", &back).ok());
  EXPECT_EQ(back, m);
  // Off: the keys are not written.
  Model plain = m;
  plain.attention_chunk = 0;
  plain.global_attention_every = 0;
  EXPECT_FALSE(model_to_json(plain).as_object().contains("attention_chunk"));

  Model bad = m;
  bad.attention_chunk = -1;
  EXPECT_EQ(validate(bad).message(), "model.attention_chunk: must not be negative, got -1");
  bad = m;
  bad.attention_chunk = 0;
  EXPECT_EQ(validate(bad).message(), "model.global_attention_every: needs an attention_chunk");
  bad = m;
  bad.sliding_window = 128;
  EXPECT_EQ(validate(bad).message(),
            "model.attention_chunk: cannot be combined with sliding_window (give one of them)");
}

TEST(ChunkedAttention, SimulatesEveryLayerKindOnce) {
  // 8 layers over pp 2: both stages hold one global layer (3 and 7), so
  // both chunks are alike; the step runs and chunked layers are cheaper
  // than full ones would be.
  const Cluster cluster = testing::preset_cluster("dgx-h100");
  Model chunked = scout_attention(8, 32768);
  Model full = chunked;
  full.attention_chunk = 0;
  full.global_attention_every = 0;
  Plan plan;
  plan.tensor_parallel = 4;
  plan.pipeline_parallel = 2;
  plan.sequence_parallel = true;
  plan.micro_batch_size = 1;
  plan.global_batch_size = 8;
  const Result<StepReport> a = simulate(chunked, plan, cluster);
  const Result<StepReport> b = simulate(full, plan, cluster);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_LT(a->iteration_time_s, b->iteration_time_s);
}

// Published totals: Meta, "The Llama 4 herd" (2025-04-05) and the model
// cards: Scout 17B active / 109B total, Maverick 17B active / 400B total.
// Those totals are the released checkpoints, vision encoder included;
// the presets are the text models. The vision encoder's parameters from
// the released vision_config (hidden 1408, intermediate 5632, 34 layers,
// patch 14, image 336; LayerNorm and biased linears as in
// modeling_llama4.py Llama4VisionEncoderLayer): patch embedding 3 x 14^2 x
// 1408, class + positional embeddings (577 + 1) x 1408, pre / post
// LayerNorms, 34 layers of 4 biased 1408^2 projections, a biased
// 1408 -> 5632 -> 1408 MLP and two LayerNorms. (The pixel-shuffle adapter
// and projector, a few tens of millions more, are left out: a lower bound.)
double vision_encoder_lower_bound() {
  const double h = 1408, f = 5632;
  const double layer = 4 * (h * h + h) + (h * f + f) + (f * h + h) + 4 * h;
  return 3 * 14 * 14 * h + (577 + 1) * h + 4 * h + 34 * layer;
}

TEST(Llama4Presets, ParameterCountsMatchThePublishedFigures) {
  const Model scout = testing::preset_model("llama4-scout");
  const Model maverick = testing::preset_model("llama4-maverick");
  EXPECT_NEAR(vision_encoder_lower_bound(), 0.811e9, 0.001e9);
  // Scout: every layer MoE (16 + 1 shared of 8192), 107.77B text.
  EXPECT_EQ(scout.num_moe_layers(), 48);
  EXPECT_EQ(scout.parameter_count(), 107769861120);
  EXPECT_NEAR((scout.parameter_count() + vision_encoder_lower_bound()) / 109e9, 1.0, 0.01);
  // Maverick: MoE on the odd layers (interleave_moe_layer_step 2), dense
  // FFN 16384 on the even ones; 400.71B text.
  EXPECT_FALSE(maverick.is_moe_layer(0));
  EXPECT_TRUE(maverick.is_moe_layer(1));
  EXPECT_TRUE(maverick.is_moe_layer(47));
  EXPECT_EQ(maverick.num_moe_layers(), 24);
  EXPECT_EQ(maverick.parameter_count(), 400711848960);
  EXPECT_NEAR(maverick.parameter_count() / 400e9, 1.0, 0.01);
  EXPECT_NEAR((maverick.parameter_count() + vision_encoder_lower_bound()) / 400e9, 1.0, 0.01);
  // Active: 17.17B and 17.18B against the published "17B", a figure
  // rounded to the billion (17.17 / 17 = 1.0102): within 1.1 %.
  EXPECT_EQ(scout.active_parameter_count(), 17172894720);
  EXPECT_EQ(maverick.active_parameter_count(), 17184691200);
  EXPECT_NEAR(scout.active_parameter_count() / 17e9, 1.0, 0.011);
  EXPECT_NEAR(maverick.active_parameter_count() / 17e9, 1.0, 0.011);
  // Chunked attention with NoPE global layers every 4th.
  EXPECT_EQ(scout.attention_chunk, 8192);
  EXPECT_EQ(scout.global_attention_every, 4);
  EXPECT_EQ(maverick.attention_chunk, 8192);
}

}  // namespace
}  // namespace llmplan::simulator

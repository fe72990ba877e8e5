// Multi-head latent attention and multi-token prediction (simulator/model.h,
// layers/mla.h): parameter counts of the deepseek-v3 and kimi-k2 presets
// against the published figures, the MLA layer's GEMM and attention FLOPs
// against hand formulas, its tensor-parallel sharding and SP gathers,
// activation memory, the NeMo deepseekv3 model-FLOPs formula, what an MTP
// module adds, and the JSON keys with their errors.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "presets/catalog.h"
#include "simulator/lowering.h"
#include "simulator/memory.h"
#include "simulator/model_json.h"
#include "simulator/simulate.h"
#include "tests/simulator/test_cluster.h"
#include "tests/simulator/test_models.h"
#include "tests/simulator/test_presets.h"

namespace llmplan::simulator {
namespace {

// GEMMs and flash attention at FLOPs / 1e15 s, memory-bound kernels at
// bytes / 1e12 s, collectives at bytes / 1e11 s (any group of > 1 rank);
// records every kernel.
class UnitCost final : public CostModel {
 public:
  double kernel_time_s(const KernelDesc& k) const override {
    kernels_.push_back(k);
    if (is_gemm(k.kind) || k.kind == KernelKind::kFlashAttention) return k.flops / 1e15;
    return k.bytes / 1e12;
  }
  double collective_time_s(const CollectiveDesc& c) const override {
    return c.group.size > 1 ? c.bytes / 1e11 : 0.0;
  }
  double microbatch_overhead_s() const override { return 0.0; }
  double iteration_overhead_s() const override { return 0.0; }
  double comm_compute_slowdown() const override { return 0.0; }
  std::string describe() const override { return "mla test model"; }
  mutable std::vector<KernelDesc> kernels_;  // single-threaded tests only
};

Model preset(const std::string& name) { return testing::preset_model(name); }

// A small dense MLA model: h 1024, 8 heads, q_lora 256, kv_lora 128,
// qk 48 + 16 rotary, v 32, f 2048, s 256.
Model small_mla() {
  Model m = testing::modern_model("mla-small", 2, 1024, 8, 2048, 256, 4096);
  testing::add_mla(&m, 256, 128, 48, 16, 32);
  return m;
}

double within(double actual, double published) { return std::fabs(actual / published - 1.0); }

TEST(Mla, DeepSeekV3ParametersMatchThePublishedFigures) {
  const Model m = preset("deepseek-v3");
  ASSERT_TRUE(validate(m).ok());
  ASSERT_EQ(m.mtp_layers, 1);
  const double h = 7168, V = 129280;
  const double main = static_cast<double>(m.parameter_count() - m.mtp_parameters());
  // DeepSeek-V3 report: 671B total (main model), 37B activated.
  EXPECT_LT(within(main, 671e9), 0.01) << main;
  // The hub's 685B: the main model, the MTP module and its own copies of
  // the embedding and output head (counted once here).
  EXPECT_LT(within(static_cast<double>(m.parameter_count()) + 2 * V * h, 685e9), 0.01);
  EXPECT_LT(within(static_cast<double>(m.parameter_count()), 685e9), 0.01);
  // Active: 37.55B with both embeddings counted in full (as
  // active_parameter_count does); DeepSeek's "37B" truncates it (1.5 %).
  const double idle = 248.0 * 3 * h * 2048;  // one MTP layer's idle experts
  const double active_main = static_cast<double>(m.active_parameter_count()) -
                             (static_cast<double>(m.mtp_parameters()) - idle);
  EXPECT_NEAR(active_main, 37.55e9, 0.01e9);
  EXPECT_LT(within(active_main, 37e9), 0.016);
  // One MLA layer's attention by hand: q down + norm + up, kv down + norm +
  // up, o_proj, two RMSNorms.
  const double a = 128;
  const double attn = h * 1536 + 1536 + 1536 * a * 192 + h * 576 + 512 + 512 * a * 256 +
                      a * 128 * h + 2 * h;
  EXPECT_EQ(static_cast<double>(m.layer_parameters()), attn + 3 * h * 18432);
  EXPECT_EQ(static_cast<double>(m.mla_replicated_parameters()), h * 1536 + 1536 + h * 576 + 512);
  // MTP: two norms, eh_proj [2h -> h], the head's norm, one MoE layer.
  EXPECT_EQ(m.mtp_parameters(), static_cast<int64_t>(3 * h + 2 * h * h) + m.moe_layer_parameters());
}

TEST(Mla, KimiK2ParametersMatchThePublishedFigures) {
  const Model m = preset("kimi-k2");
  ASSERT_TRUE(validate(m).ok());
  EXPECT_EQ(m.mtp_layers, 0);
  // Kimi K2 report (arXiv:2507.20534): 1.04T total, 32.6B activated. The
  // config.json shape gives 1.026T: 1.3 % under the report's figure, which
  // the report does not break down.
  EXPECT_LT(within(static_cast<double>(m.parameter_count()), 1.04e12), 0.015);
  EXPECT_LT(within(static_cast<double>(m.active_parameter_count()), 32.6e9), 0.01);
}

// Forward FLOPs of the kernels of `kind` in `pass` recorded by `cost`.
double flops_of(const UnitCost& cost, KernelKind kind, Pass pass) {
  double f = 0;
  for (const KernelDesc& k : cost.kernels_) {
    if (k.kind == kind && k.pass == pass) f += k.flops;
  }
  return f;
}

TEST(Mla, LayerFlopsMatchTheHandFormula) {
  Model m = small_mla();
  m.num_layers = 1;
  ASSERT_TRUE(validate(m).ok());
  Plan plan;
  plan.micro_batch_size = 2;
  plan.global_batch_size = 2;
  const Cluster cluster = testing::a100_cluster();
  UnitCost cost;
  lower_chunk(m, plan, place(plan, cluster), cost, 0);
  const double T = 2 * 256, h = 1024, a = 8;
  // q down [h -> 256], kv down [h -> 128 + 16], q up [256 -> a 64], kv up
  // [128 -> a (48 + 32)].
  const double projections = 2 * T * (h * 256 + h * 144 + 256 * a * 64 + 128 * a * 80);
  EXPECT_DOUBLE_EQ(flops_of(cost, KernelKind::kQkvGemm, Pass::kForward), projections);
  EXPECT_DOUBLE_EQ(flops_of(cost, KernelKind::kOutProjGemm, Pass::kForward), 2 * T * a * 32 * h);
  // Attention: 2 (qk + v) per query-key pair and head, every pair.
  EXPECT_DOUBLE_EQ(flops_of(cost, KernelKind::kFlashAttention, Pass::kForward),
                   2.0 * 2 * a * 256 * 256 * (64 + 32));
  EXPECT_DOUBLE_EQ(flops_of(cost, KernelKind::kFlashAttention, Pass::kBackward),
                   2.5 * 2.0 * 2 * a * 256 * 256 * (64 + 32));
}

TEST(Mla, TensorParallelShardsTheUpProjectionsOnly) {
  const Model m = small_mla();
  Plan plan;
  plan.tensor_parallel = 4;
  plan.sequence_parallel = true;
  plan.micro_batch_size = 1;
  plan.global_batch_size = 1;
  const Cluster cluster = testing::a100_cluster();
  UnitCost cost;
  const ChunkProgram prog = lower_chunk(m, plan, place(plan, cluster), cost, 0);
  std::vector<GemmShape> qkv;
  for (const KernelDesc& k : cost.kernels_) {
    if (k.kind == KernelKind::kQkvGemm && k.pass == Pass::kForward) qkv.push_back(k.gemm);
  }
  ASSERT_EQ(qkv.size(), 8u);  // 2 layers x (q down, kv down, q up, kv up)
  // Down-projections on the rank's 256 / 4 tokens, unsplit columns.
  EXPECT_EQ(qkv[0], (GemmShape{64, 256, 1024, 1}));
  EXPECT_EQ(qkv[1], (GemmShape{64, 144, 1024, 1}));
  // Up-projections on all 256 tokens, a / t heads.
  EXPECT_EQ(qkv[2], (GemmShape{256, 2 * 64, 256, 1}));
  EXPECT_EQ(qkv[3], (GemmShape{256, 2 * 80, 128, 1}));
  // The forward's TP collectives: the embedding's reduce-scatter, then per
  // layer the latents' all-gather (256 tokens x (256 + 128 + 16) x 2
  // bytes, not attention's 256 x 1024 x 2) and the output's reduce-scatter.
  std::vector<double> comm;
  for (const LoweredOp& op : prog.forward) {
    if (op.stream == StreamKind::kTensorComm) comm.push_back(op.duration_s * 1e11);
  }
  ASSERT_GE(comm.size(), 3u);
  EXPECT_DOUBLE_EQ(comm[0], 256.0 * 1024 * 2);
  EXPECT_DOUBLE_EQ(comm[1], 256.0 * 400 * 2);
  EXPECT_DOUBLE_EQ(comm[2], 256.0 * 1024 * 2);
  // The duplicated down-projections and norms count whole on each rank.
  const double replicated = static_cast<double>(m.mla_replicated_parameters());
  EXPECT_DOUBLE_EQ(layer_parameters_per_device(m, plan, 0),
                   (static_cast<double>(m.layer_parameters()) - replicated) / 4 + replicated);
}

TEST(Mla, ActivationMemoryTerms) {
  const Model m = small_mla();
  Plan plan;
  plan.dropout = false;
  plan.micro_batch_size = 1;
  const double s = 256, h = 1024, a = 8, f = 2048;
  // Per token: norm inputs 4h, the down-projections' input 2h, FC1's input
  // 2h; latent norm inputs and up-projection inputs 4 (256 + 128); q, k
  // (2 x 2 a 64), v and out (2 x 2 a 32) and the output projection's input
  // (out itself), the softmax statistics 4a; SwiGLU 6f.
  const double per_token = 8 * h + 4 * (256 + 128) + 4 * a * 64 + 4 * a * 32 + 4 * a + 6 * f;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, plan), s * per_token);
  // TP 4 with SP: everything split by 4.
  plan.tensor_parallel = 4;
  plan.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, plan), s * per_token / 4);
  // Without SP the down-projections and latents stay whole per rank.
  plan.sequence_parallel = false;
  const double whole = 8 * h + 4 * (256 + 128);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, plan), s * (whole + (per_token - whole) / 4));
}

TEST(Mla, ModelFlopsFollowNemoDeepSeekV3Formula) {
  const Model m = preset("deepseek-v3");
  // NeMo / Megatron-Bridge flops_utils deepseekv3, written out for gbs 1.
  const double s = 4096, h = 7168, a = 128, V = 129280;
  const double attention = 6 * (0.5 * 192 * a * s * s + 0.5 * 128 * a * s * s) * (61 + 1);
  const double mla = h * 1536 + 1536 * 192 * a + h * 64 + h * 512 + 512 * 256 * a + 128 * a * h;
  const double dense_ffn = 3 * h * 18432, moe_ffn = 3 * h * 2048 * (1 + 8);
  const double linear = 6 * s * (mla * 62 + 3 * dense_ffn + 58 * moe_ffn + moe_ffn);
  const double vocab = 6 * V * h * s * 2 + 6 * h * 2 * h * s;
  EXPECT_NEAR(m.model_flops_per_step(1), attention + linear + vocab,
              1e-9 * (attention + linear + vocab));
  // Without MTP: the main model alone.
  Model no_mtp = m;
  no_mtp.mtp_layers = 0;
  const double main = 6 * (0.5 * 320 * a * s * s) * 61 +
                      6 * s * (mla * 61 + 3 * dense_ffn + 58 * moe_ffn) + 6 * V * h * s;
  EXPECT_NEAR(no_mtp.model_flops_per_step(1), main, 1e-9 * main);
}

TEST(Mla, MtpModuleAddsItsLayerOnTheLastStage) {
  Model base = small_mla();
  base.num_layers = 4;
  Model mtp = base;
  mtp.mtp_layers = 1;
  ASSERT_TRUE(validate(mtp).ok());
  const double h = 1024;
  EXPECT_EQ(mtp.parameter_count() - base.parameter_count(),
            static_cast<int64_t>(3 * h + 2 * h * h) + base.layer_parameters());
  Plan plan;
  plan.pipeline_parallel = 2;
  plan.micro_batch_size = 1;
  plan.global_batch_size = 8;
  const Cluster cluster = testing::a100_cluster();
  const auto fwd_flops = [&](const Model& m, int chunk) {
    UnitCost cost;
    const ChunkProgram p = lower_chunk(m, plan, place(plan, cluster), cost, chunk);
    double f = 0;
    for (const LoweredOp& op : p.forward) f += op.flops;
    return f;
  };
  // The first stage is unchanged; the last gains one layer, eh_proj
  // [2h -> h] and a second logits GEMM.
  EXPECT_DOUBLE_EQ(fwd_flops(mtp, 0), fwd_flops(base, 0));
  const double T = 256;
  const double last_stage = fwd_flops(base, 1);
  const double extra = fwd_flops(mtp, 1) - last_stage;
  const double logits = 2 * T * 4096 * h;
  const double eh_proj = 2 * T * 2 * h * h;
  // Two layers on the last stage: a layer's forward FLOPs are (the stage's
  // - the logits') / 2.
  const double per_layer = (last_stage - logits) / 2;
  EXPECT_NEAR(extra, per_layer + eh_proj + logits, 1e-9 * extra);
  // Memory: the last stage holds the module's parameters (and its own
  // embedding copy, V h) and more activations.
  const std::vector<double> p0 = stage_parameters_per_device(base, plan);
  const std::vector<double> p1 = stage_parameters_per_device(mtp, plan);
  EXPECT_DOUBLE_EQ(p1[0], p0[0]);
  EXPECT_DOUBLE_EQ(p1[1] - p0[1],
                   3 * h + 2 * h * h + static_cast<double>(base.layer_parameters()) + 4096 * h);
  const std::vector<MemoryBreakdown> m0 = stage_memory(base, plan, p0, 0);
  const std::vector<MemoryBreakdown> m1 = stage_memory(mtp, plan, p1, 0);
  EXPECT_DOUBLE_EQ(m1[0].activation_bytes, m0[0].activation_bytes);
  EXPECT_GT(m1[1].activation_bytes, m0[1].activation_bytes);
  EXPECT_DOUBLE_EQ(m1[1].logits_bytes, 2 * m0[1].logits_bytes);
}

TEST(Mla, JsonRoundTripAndErrors) {
  const Model m = preset("deepseek-v3");
  const boost::json::value v = model_to_json(m);
  EXPECT_EQ(v.as_object().at("kv_lora_rank").as_int64(), 512);
  EXPECT_EQ(v.as_object().at("mtp_layers").as_int64(), 1);
  Model back;
  ASSERT_TRUE(apply_model_json(v, "model", &back).ok());
  Model resolved = m;  // the writer writes the widths used: kv_heads = heads
  resolved.num_kv_heads = m.kv_heads();
  resolved.ffn_hidden_size = m.ffn_hidden();
  EXPECT_EQ(back, resolved);
  // A dense GQA model writes none of the keys.
  Model plain = small_mla();
  plain.q_lora_rank = plain.kv_lora_rank = plain.qk_nope_head_dim = plain.qk_rope_head_dim =
      plain.v_head_dim = 0;
  EXPECT_FALSE(model_to_json(plain).as_object().contains("kv_lora_rank"));
  EXPECT_FALSE(model_to_json(plain).as_object().contains("mtp_layers"));

  const auto error = [](Model x) { return validate(x).message(); };
  Model q = plain;
  q.q_lora_rank = 64;
  EXPECT_EQ(error(q), "model.q_lora_rank: needs kv_lora_rank > 0 (MLA is off)");
  Model nope = small_mla();
  nope.qk_rope_head_dim = 0;
  EXPECT_EQ(error(nope), "model.qk_rope_head_dim: must be positive, got 0");
  Model hd = small_mla();
  hd.head_dim_size = 128;
  EXPECT_NE(error(hd).find("model.head_dim: must be unset with MLA"), std::string::npos);
  Model gqa = small_mla();
  gqa.num_kv_heads = 2;
  EXPECT_NE(error(gqa).find("model.kv_heads: must be unset with MLA"), std::string::npos);
  Model bias = small_mla();
  bias.linear_bias = true;
  EXPECT_EQ(error(bias), "model.linear_bias: must be false with MLA (kv_lora_rank > 0)");
  Model neg = small_mla();
  neg.mtp_layers = -1;
  EXPECT_EQ(error(neg), "model.mtp_layers: must not be negative, got -1");
  // JSON: a negative value is refused by the reader, naming the key.
  boost::json::object o = model_to_json(small_mla()).as_object();
  o["kv_lora_rank"] = -5;
  Model out;
  const Status s = apply_model_json(o, "model", &out);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("kv_lora_rank"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find('\n'), std::string::npos);
}

}  // namespace
}  // namespace llmplan::simulator

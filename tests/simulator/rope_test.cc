// Rotary position embedding in the attention lowering (layers/attention.h):
// the bytes of Transformer Engine's fused kernel and of Megatron-Core's
// eager path, partial rotary, the layers and models without RoPE, full
// recomputation, the new fields' checks and JSON, and the runs files'
// mapping (GPT-OSS's Megatron-Bridge rows unfused, Nemotron's half-rotary).
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "planner/accuracy/runs_file.h"
#include "presets/catalog.h"
#include "simulator/lowering.h"
#include "simulator/layers/attention.h"
#include "simulator/model_json.h"
#include "simulator/plan_json.h"
#include "tests/simulator/test_cluster.h"

namespace llmplan::simulator {
namespace {

using testing::a100_cluster;

// Memory-bound kernels at bytes / 1e12 s, GEMMs and attention at FLOPs /
// 1e15 s, collectives free: a RoPE op's duration is its bytes / 1e12.
class StubCost final : public CostModel {
 public:
  double kernel_time_s(const KernelDesc& k) const override {
    if (is_gemm(k.kind) || k.kind == KernelKind::kFlashAttention) return k.flops / 1e15;
    return k.bytes / 1e12;
  }
  double collective_time_s(const CollectiveDesc&) const override { return 0.0; }
  double microbatch_overhead_s() const override { return 0.0; }
  double iteration_overhead_s() const override { return 0.0; }
  double comm_compute_slowdown() const override { return 0.0; }
  std::string describe() const override { return "rope test model"; }
};

// A Llama-style model: h 2048, 16 query heads and 4 kv heads of 128, s 2048.
Model llama_like() {
  Model m = testing::modern_model("rope-test", 2, 2048, 16, 5632, 2048, 32000);
  m.num_kv_heads = 4;
  return m;
}

Plan one_gpu_plan() {
  Plan plan;
  plan.global_batch_size = 1;
  return plan;
}

// The rope ops of a lowered pass: summed seconds (= bytes / 1e12) and count.
struct RopeOps {
  double bytes = 0;
  int kernels = 0;
  int recompute = 0;
};
RopeOps rope_ops(const std::vector<LoweredOp>& ops) {
  RopeOps out;
  for (const LoweredOp& op : ops) {
    if (std::string(op.name) != "rope") continue;
    out.bytes += op.duration_s * 1e12;
    ++out.kernels;
    if (op.category == OpCategory::kRecompute) ++out.recompute;
  }
  return out;
}

ChunkProgram lower(const Model& model, const Plan& plan) {
  const Cluster cluster = a100_cluster();
  const StubCost cost;
  EXPECT_TRUE(validate(model, plan).ok()) << validate(model, plan).message();
  return lower_chunk(model, plan, place(plan, cluster), cost, 0);
}

// Elements of q and k per layer on one GPU: s x (16 + 4) heads x 128.
constexpr double kQkElements = 2048.0 * 20 * 128;

TEST(RopeLowering, FusedMovesFourBytesPerElementEachWay) {
  // TE's fused_apply_rotary_pos_emb: read t, write the output (4 B per
  // element), one kernel per tensor (q, k) and pass, per layer.
  const ChunkProgram p = lower(llama_like(), one_gpu_plan());
  const RopeOps fwd = rope_ops(p.forward), bwd = rope_ops(p.backward);
  EXPECT_EQ(fwd.kernels, 2 * 2);
  EXPECT_EQ(bwd.kernels, 2 * 2);
  EXPECT_NEAR(fwd.bytes, 2 * 4 * kQkElements, 1e-3 * fwd.bytes);
  EXPECT_NEAR(bwd.bytes, 2 * 4 * kQkElements, 1e-3 * bwd.bytes);
  EXPECT_DOUBLE_EQ(lowering::Attention::rope_bytes_per_element(llama_like(), Pass::kForward, true), 4.0);
  // Tensor parallelism splits the heads: t = 2 halves the bytes.
  Plan tp2 = one_gpu_plan();
  tp2.tensor_parallel = 2;
  EXPECT_NEAR(rope_ops(lower(llama_like(), tp2).forward).bytes, 4 * kQkElements,
              1e-3 * 4 * kQkElements);
}

TEST(RopeLowering, UnfusedCostsTheEagerOps) {
  // Megatron-Core's _apply_rotary_pos_emb_bshd: forward 24 B per element
  // (t*cos 4, neg 2, cat 4, *sin 4, add 6, the final cat 4) plus cos/sin of
  // the fp32 freqs (44 B per s x d element per tensor); backward 28 B
  // (*sin 4, neg 2, cat 4, *cos 4, sum 6, the empty t_pass slice's zeros 2
  // and its gradient's sum 6).
  Plan plan = one_gpu_plan();
  plan.rope_fusion = false;
  const ChunkProgram p = lower(llama_like(), plan);
  const RopeOps fwd = rope_ops(p.forward), bwd = rope_ops(p.backward);
  const double freqs = 44.0 * 2048 * 128;
  EXPECT_EQ(fwd.kernels, 2 * 2);
  EXPECT_NEAR(fwd.bytes, 2 * (24 * kQkElements + 2 * freqs), 1e-3 * fwd.bytes);
  EXPECT_NEAR(bwd.bytes, 2 * 28 * kQkElements, 1e-3 * bwd.bytes);
  // Half-rotary (Nemotron-4): 20 r + 4 forward, 20 r + 14 backward.
  Model half = llama_like();
  half.rotary_fraction = 0.5;
  const ChunkProgram h = lower(half, plan);
  EXPECT_NEAR(rope_ops(h.forward).bytes, 2 * (14 * kQkElements + 2 * freqs / 2),
              1e-3 * rope_ops(h.forward).bytes);
  EXPECT_NEAR(rope_ops(h.backward).bytes, 2 * 24 * kQkElements, 1e-3 * rope_ops(h.backward).bytes);
  // The fused kernel copies the unrotated half through: 4 B whatever r.
  EXPECT_NEAR(rope_ops(lower(half, one_gpu_plan()).forward).bytes, 2 * 4 * kQkElements,
              1e-3 * 2 * 4 * kQkElements);
}

TEST(RopeLowering, ModelsAndLayersWithoutRopeCostNone) {
  // Learned positions (GPT-3), rotary_fraction 0 (Nemotron-H, ALiBi), latent
  // attention (its RoPE is mla.cc's): no rope op, and the step is what it
  // was with RoPE's ops taken out.
  Model learned = llama_like();
  learned.positions = PositionEmbedding::kLearned;
  for (bool fused : {true, false}) {
    Plan plan = one_gpu_plan();
    plan.rope_fusion = fused;
    const ChunkProgram p = lower(learned, plan);
    EXPECT_EQ(rope_ops(p.forward).kernels + rope_ops(p.backward).kernels, 0);
  }
  Model nope = llama_like();
  nope.rotary_fraction = 0;
  const ChunkProgram with = lower(llama_like(), one_gpu_plan());
  const ChunkProgram without = lower(nope, one_gpu_plan());
  EXPECT_EQ(rope_ops(without.forward).kernels + rope_ops(without.backward).kernels, 0);
  EXPECT_EQ(with.forward.size(), without.forward.size() + 4);
  EXPECT_NEAR(with.forward_s - without.forward_s, rope_ops(with.forward).bytes / 1e12, 1e-12);
  // Llama 4: every fourth layer is a global NoPE layer.
  Model chunked = llama_like();
  chunked.num_layers = 4;
  chunked.attention_chunk = 512;
  chunked.global_attention_every = 4;
  EXPECT_EQ(rope_ops(lower(chunked, one_gpu_plan()).forward).kernels, 3 * 2);
}

TEST(RopeLowering, FullRecomputationRunsItAgainSelectiveDoesNot) {
  Plan full = one_gpu_plan();
  full.recompute = Recompute::kFull;
  const RopeOps bwd = rope_ops(lower(llama_like(), full).backward);
  EXPECT_EQ(bwd.kernels, 2 * 2 + 2 * 2);
  EXPECT_EQ(bwd.recompute, 2 * 2);
  Plan selective = one_gpu_plan();
  selective.recompute = Recompute::kSelective;
  EXPECT_EQ(rope_ops(lower(llama_like(), selective).backward).recompute, 0);
}

TEST(RopeFields, ChecksAndJson) {
  Model m = llama_like();
  m.rotary_fraction = 1.5;
  EXPECT_NE(validate(m).message().find("rotary_fraction"), std::string::npos);
  m.rotary_fraction = 0.5;
  EXPECT_TRUE(validate(m).ok());
  m.positions = PositionEmbedding::kLearned;
  EXPECT_NE(validate(m).message().find("rotary_fraction"), std::string::npos);
  // JSON: written only when not the default, read back.
  m = llama_like();
  m.rotary_fraction = 0.25;
  Model back;
  ASSERT_TRUE(apply_model_json(model_to_json(m), "model", &back).ok());
  EXPECT_EQ(back.rotary_fraction, 0.25);
  EXPECT_FALSE(model_to_json(llama_like()).as_object().contains("rotary_fraction"));
  Plan plan = one_gpu_plan();
  EXPECT_FALSE(plan_to_json(plan).as_object().contains("rope_fusion"));
  plan.rope_fusion = false;
  Plan read;
  ASSERT_TRUE(apply_plan_json(plan_to_json(plan), "plan", &read).ok());
  EXPECT_FALSE(read.rope_fusion);
}

TEST(RopeRunsFiles, GptOssRowsRunUnfusedNemotronRotatesHalf) {
  Result<presets::Catalog> catalog = presets::Catalog::builtin();
  ASSERT_TRUE(catalog.ok());
  int gpt_oss = 0, fused = 0, half = 0;
  for (const char* file : {"/h100/published_runs.csv", "/blackwell/published_runs.csv"}) {
    Result<std::vector<planner::PublishedRun>> runs =
        planner::read_runs_file(std::string(LLMPLAN_DATA_DIR) + file, "", *catalog);
    ASSERT_TRUE(runs.ok()) << runs.status().message();
    for (const planner::PublishedRun& r : *runs) {
      if (!r.missing.empty()) continue;
      const Model& m = r.config.model;
      const bool oss = m.name.rfind("gpt-oss", 0) == 0;
      EXPECT_EQ(r.config.plan.rope_fusion, !oss) << r.name;
      gpt_oss += oss;
      fused += r.config.plan.rope_fusion;
      if (m.name.rfind("nemotron4", 0) == 0) {
        EXPECT_EQ(m.rotary_fraction, 0.5) << r.name;
        ++half;
      }
      if (m.name.rfind("nemotron3-nano", 0) == 0 || m.name.rfind("nemotron3-super", 0) == 0) {
        EXPECT_EQ(m.rotary_fraction, 0) << r.name;
      }
    }
  }
  EXPECT_GE(gpt_oss, 5 + 13);
  EXPECT_GT(fused, 100);
  EXPECT_GT(half, 0);
}

}  // namespace
}  // namespace llmplan::simulator

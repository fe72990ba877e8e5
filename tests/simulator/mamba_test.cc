// Hybrid Mamba-2 models (Model::layer_pattern, layers/mamba.h): pattern
// validation, parameters and model FLOPs against hand formulas, the Mamba
// mixer's kernels (GEMM shapes, SSD FLOPs and bytes, conv and norm bytes) at
// tp 1 and 2, plan checks (TP over heads/groups, cp refused), the
// nemotron3-nano preset's published parameter counts, squared ReLU, and the
// activation memory of a Mamba layer.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "presets/catalog.h"
#include "simulator/lowering.h"
#include "simulator/memory.h"
#include "simulator/model_json.h"
#include "simulator/plan.h"
#include "tests/simulator/test_cluster.h"
#include "tests/simulator/test_models.h"
#include "tests/simulator/test_presets.h"

namespace llmplan::simulator {
namespace {

using testing::RecordingCost;
using testing::layout_plan;

// h 256, 4 attention heads (2 kv, d 64), Mamba-2: 8 heads x 32, state 16,
// 2 groups; 4 experts top-2 of 128; dense ffn 512; pattern M*-E.
Model hybrid() {
  Model m = testing::modern_model("hybrid-test", 4, 256, 4, 512, 1024, 1000);
  m.num_kv_heads = 2;
  m.activation = Activation::kSquaredRelu;
  testing::add_experts(&m, 4, 2, 128);
  testing::add_mamba(&m, "M*-E", 8, 32, 16, 2);
  return m;
}

std::string error_of(const Model& m) { return validate(m).message(); }

TEST(Mamba, ValidatesThePattern) {
  ASSERT_TRUE(validate(hybrid()).ok()) << validate(hybrid()).message();
  Model m = hybrid();
  m.layer_pattern = "M*X-";
  EXPECT_EQ(error_of(m), "model.layer_pattern: character 'X' at 2 is not M, *, - or E");
  m.layer_pattern = "M*E";
  EXPECT_EQ(error_of(m), "model.layer_pattern: has 3 characters, layers is 4");
  m = hybrid();
  m.moe_layer_every = 2;
  EXPECT_EQ(error_of(m), "model.moe_every: must be left at 1 with a layer_pattern");
  m = hybrid();
  m.layer_pattern = "M*-*";
  EXPECT_EQ(error_of(m), "model.experts: set, but layer_pattern has no E layer");
  m = hybrid();
  m.mamba_groups = 3;
  EXPECT_EQ(error_of(m), "model.mamba_groups: 3 groups do not divide 8 mamba_heads");
  m = hybrid();
  m.mamba_state_dim = 0;
  EXPECT_EQ(error_of(m), "model.mamba_state_dim: must be positive, got 0");
  // Mamba fields on a model without Mamba layers.
  Model dense = testing::gpt(2, 64, 4, 128, 100);
  dense.name.clear();
  dense.mamba_heads = 4;
  EXPECT_EQ(error_of(dense), "model.mamba_heads: needs Mamba layers (M in layer_pattern)");
}

TEST(Mamba, ParametersByLayerKind) {
  const Model m = hybrid();
  const int64_t h = 256, di = 8 * 32, gn = 2 * 16, H = 8;
  const int64_t in_cols = 2 * di + 2 * gn + H;  // 584
  EXPECT_EQ(m.mamba_in_proj_columns(), in_cols);
  const int64_t conv = di + 2 * gn;             // 320
  const int64_t mamba = h + h * in_cols + conv * 5 + 3 * H + di + di * h;
  EXPECT_EQ(m.layer_parameters(0), mamba);
  const int64_t attention = h + h * (4 + 2 * 2) * 64 + 4 * 64 * h;
  EXPECT_EQ(m.layer_parameters(1), attention);
  const int64_t mlp = h + 2 * h * 512;  // squared ReLU: non-gated, two matrices
  EXPECT_EQ(m.layer_parameters(2), mlp);
  const int64_t moe = h + h * 4 + 4 * 2 * h * 128;
  EXPECT_EQ(m.layer_parameters(3), moe);
  EXPECT_EQ(m.num_moe_layers(), 1);
  EXPECT_FALSE(m.is_moe_layer(0));
  EXPECT_TRUE(m.is_moe_layer(3));
  const int64_t ends = 2 * 1000 * h + h;  // untied embedding and head, final norm
  EXPECT_EQ(m.parameter_count(), mamba + attention + mlp + moe + ends);
  EXPECT_EQ(m.active_parameter_count(), m.parameter_count() - 2 * 2 * h * 128);
}

TEST(Mamba, ModelFlopsByLayerKind) {
  const Model m = hybrid();
  const double h = 256, s = 1024, Q = 128, N = 16, P = 32, H = 8, G = 2;
  const double ssd = 2 * (Q * N * G + Q * P * H + 2 * N * P * H);
  EXPECT_DOUBLE_EQ(m.ssd_flops_per_token(), ssd);
  const double mamba = 2 * h * 584 + 2 * 256 * h + ssd;
  const double attention = 2 * h * (256 + 2 * 128) + 2 * 256 * h + 4 * s * 256;
  const double mlp = 2 * 2 * h * 512;
  const double moe = 2 * h * 4 + 2 * 2 * h * 128 * 2;
  const double logits = 2 * h * 1000;
  EXPECT_DOUBLE_EQ(m.model_flops_per_step(3), 3 * 3 * s * (mamba + attention + mlp + moe + logits));
}

TEST(Mamba, SquaredReluCostsAsGelu) {
  Model relu2 = hybrid();
  relu2.layer_pattern = "-*-E";
  relu2.mamba_heads = relu2.mamba_head_dim = relu2.mamba_state_dim = relu2.mamba_groups = 0;
  Model gelu = relu2;
  gelu.activation = Activation::kGelu;
  EXPECT_EQ(relu2.parameter_count(), gelu.parameter_count());
  EXPECT_DOUBLE_EQ(relu2.model_flops_per_step(8), gelu.model_flops_per_step(8));
  Model back;
  ASSERT_TRUE(apply_model_json(model_to_json(relu2), "m", &back).ok());
  EXPECT_EQ(back, relu2);
  EXPECT_EQ(model_to_json(relu2).as_object().at("activation").as_string(), "squared_relu");
}

TEST(Mamba, JsonRoundTrip) {
  const Model m = hybrid();
  Model back;
  ASSERT_TRUE(apply_model_json(model_to_json(m), "m", &back).ok());
  EXPECT_EQ(back, m);
}

// The kernels one Mamba layer (pattern "M") lowers into at tp 1 and 2.
std::vector<KernelDesc> mamba_kernels(int tp) {
  Model m = hybrid();
  m.layer_pattern = "M";
  m.num_layers = 1;
  m.num_experts = m.moe_top_k = m.moe_ffn_hidden_size = 0;
  Plan plan = layout_plan(tp, 1, 1, 2);
  plan.micro_batch_size = 2;
  plan.flash_attention = true;
  EXPECT_TRUE(validate(m, plan).ok()) << validate(m, plan).message();
  const RecordingCost cost;
  const Cluster cluster = testing::a100_cluster();
  lower_chunk(m, plan, place(plan, cluster), cost, 0);
  return cost.kernels();
}

TEST(Mamba, LowersTheMixerShardedOverTp) {
  for (int tp : {1, 2}) {
    SCOPED_TRACE(tp);
    const double T = 2 * 1024, t = tp;
    int in_proj = 0, out_proj = 0, scans = 0, convs = 0, norms = 0;
    for (const KernelDesc& k : mamba_kernels(tp)) {
      if (k.kind == KernelKind::kMambaInProjGemm && k.pass == Pass::kForward) {
        ++in_proj;
        EXPECT_EQ(k.gemm.m, T);
        EXPECT_EQ(k.gemm.n, 584 / tp);
        EXPECT_EQ(k.gemm.k, 256);
      }
      if (k.kind == KernelKind::kMambaOutProjGemm && k.pass == Pass::kForward) {
        ++out_proj;
        EXPECT_EQ(k.gemm.n, 256);
        EXPECT_EQ(k.gemm.k, 256 / tp);
      }
      if (k.kind == KernelKind::kSsdScan) {
        ++scans;
        const double fwd_flops = T * 2 * (128.0 * 16 * 2 + 128.0 * 32 * 8 + 2.0 * 16 * 32 * 8) / t;
        // x, B, C, y in bf16; dt and decay in fp32; 4 fp32 copies of the states.
        const double fwd_bytes = T * (2 * (2 * 256 + 2 * 32) + 8 * 8 + 16.0 * 8 * 32 * 16 / 128) / t;
        const double scale = k.pass == Pass::kForward ? 1 : 2;
        EXPECT_DOUBLE_EQ(k.flops, scale * fwd_flops);
        EXPECT_DOUBLE_EQ(k.bytes, scale * fwd_bytes);
      }
      if (k.kind == KernelKind::kMambaConv) {
        ++convs;
        const double per = k.pass == Pass::kForward ? 2 : 3;
        EXPECT_DOUBLE_EQ(k.bytes, per * 2 * T * 320 / t);
      }
      if (k.kind == KernelKind::kMambaGatedNorm) {
        ++norms;
        const double per = k.pass == Pass::kForward ? 3 : 5;
        EXPECT_DOUBLE_EQ(k.bytes, per * 2 * T * 256 / t);
      }
    }
    EXPECT_EQ(in_proj, 1);
    EXPECT_EQ(out_proj, 1);
    EXPECT_EQ(scans, 2);
    EXPECT_EQ(convs, 2);
    EXPECT_EQ(norms, 2);
  }
}

TEST(Mamba, PlanChecks) {
  Model m = hybrid();
  m.num_kv_heads = 4;
  Plan plan = layout_plan(4, 1, 1, 1);  // tp 4 over 2 groups
  EXPECT_EQ(validate(m, plan).message(),
            "plan.tp: tensor parallelism 4 does not divide 8 mamba heads and 2 mamba groups");
  plan.tensor_parallel = 1;
  plan.context_parallel = 2;
  EXPECT_EQ(validate(m, plan).message(),
            "plan.cp: context parallelism 2 on a model with Mamba layers is not modelled "
            "(llmplan models cp only for attention)");
}

TEST(Mamba, ActivationMemoryOfAMambaLayer) {
  const Model m = hybrid();
  Plan plan = layout_plan(2, 1, 1, 1);
  plan.flash_attention = true;
  plan.dropout = false;
  // Norm input and in_proj input (2 + 2 bytes per h, not split without SP);
  // in_proj output 584, conv output 320, y 256 (2 bytes each), dt and decay
  // 8 x 8, out_proj input 2 x 256, split by t.
  const double per_token = 256 * 4.0 + (2 * 584 + 2 * 320 + 2 * 256 + 64 + 2 * 256) / 2.0;
  EXPECT_DOUBLE_EQ(hybrid_layer_activation_bytes(m, plan, 0), 1024 * per_token);
  plan.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(hybrid_layer_activation_bytes(m, plan, 0), 2.0 * 1024 * 256);
}

// The preset against NVIDIA's published counts (model card of
// nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16: 31.6B total, 3.6B active
// including embeddings), within 1 %.
TEST(Mamba, Nemotron3NanoPresetMatchesThePublishedCounts) {
  const Model m = testing::preset_model("nemotron3-nano");
  EXPECT_NEAR(static_cast<double>(m.parameter_count()) / 31.6e9, 1.0, 0.01);
  EXPECT_NEAR(static_cast<double>(m.active_parameter_count()) / 3.6e9, 1.0, 0.01);
  EXPECT_EQ(m.num_moe_layers(), 23);
}

}  // namespace
}  // namespace llmplan::simulator

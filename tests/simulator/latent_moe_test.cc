// Latent MoE (Model::moe_latent_size) and multi-token prediction with
// several layers, a hybrid block and shared weights (Model::mtp_layers,
// mtp_layer_pattern, mtp_shared_weights): parameters and FLOPs against hand
// formulas, the all-to-all and expert GEMM widths, one-line errors for bad
// keys, the nemotron3-super / nemotron3.5-lightning presets against the
// published counts, and the Blackwell runs of both models mapped.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "planner/accuracy/runs_file.h"
#include "presets/catalog.h"
#include "simulator/hf_config.h"
#include "simulator/lowering.h"
#include "simulator/model_json.h"
#include "simulator/plan.h"
#include "tests/simulator/test_cluster.h"
#include "tests/simulator/test_models.h"
#include "tests/simulator/test_presets.h"

namespace llmplan::simulator {
namespace {

// Records the all-to-alls and GEMMs asked for; kernels at FLOPs / 1e15 s or
// bytes / 1e12 s, collectives at bytes / 1e11 s.
class Recorder final : public CostModel {
 public:
  double kernel_time_s(const KernelDesc& k) const override {
    kernels_.push_back(k);
    return is_gemm(k.kind) || k.kind == KernelKind::kFlashAttention ? k.flops / 1e15
                                                                    : k.bytes / 1e12;
  }
  double collective_time_s(const CollectiveDesc& c) const override {
    if (c.kind == CollectiveKind::kAllToAll) a2a_.push_back(c);
    return c.group.size > 1 ? c.bytes / 1e11 : 0.0;
  }
  double microbatch_overhead_s() const override { return 0.0; }
  double iteration_overhead_s() const override { return 0.0; }
  double comm_compute_slowdown() const override { return 0.0; }
  std::string describe() const override { return "latent moe test"; }
  const std::vector<CollectiveDesc>& all_to_alls() const { return a2a_; }
  const std::vector<KernelDesc>& kernels() const { return kernels_; }

 private:
  mutable std::vector<CollectiveDesc> a2a_;
  mutable std::vector<KernelDesc> kernels_;
};

// A small Nemotron-3-Super-like hybrid: h 512, pattern "M*EE", 16 experts
// of 256, top-4, one shared expert of 256, latent 128.
Model latent_hybrid() {
  Model m = testing::modern_model("latent-test", 4, 512, 8, 256, 1024, 1000);
  m.num_kv_heads = 2;
  m.head_dim_size = 64;
  m.activation = Activation::kSquaredRelu;
  testing::add_experts(&m, 16, 4, 256);
  m.moe_shared_experts = 1;
  m.moe_router = MoeRouter::kSigmoid;
  m.moe_latent_size = 128;
  testing::add_mamba(&m, "M*EE", 16, 64, 32, 2);
  return m;
}

std::string error_of(const Model& m) { return validate(m).message(); }

TEST(LatentMoe, CountsParametersAndFlopsAtTheLatentWidth) {
  const Model m = latent_hybrid();
  ASSERT_TRUE(validate(m).ok()) << error_of(m);
  const int64_t h = 512, l = 128, f = 256, e = 16, k = 4;
  // Routed experts: fc1 [L -> f], fc2 [f -> L] (squared ReLU: 2 matrices).
  EXPECT_EQ(m.expert_parameters_per_layer(), e * 2 * l * f);
  EXPECT_EQ(m.moe_latent_parameters(), 2 * h * l);
  // An 'E' layer: its norm, the router, the shared expert on h, the two
  // latent projections and the routed experts.
  const int64_t moe_layer = h + h * e + 2 * h * f + 2 * h * l + e * 2 * l * f;
  EXPECT_EQ(m.layer_parameters(2), moe_layer);
  Model plain = m;
  plain.moe_latent_size = 0;
  EXPECT_EQ(plain.layer_parameters(2), h + h * e + 2 * h * f + e * 2 * h * f);
  // Active: each MoE layer less its E - k idle latent experts.
  EXPECT_EQ(m.parameter_count() - m.active_parameter_count(), 2 * (e - k) * 2 * l * f);
  // Model FLOPs of the two MoE layers per token: router 2hE, latent
  // projections 2 x 2hL, k routed experts 2 x 2Lf each, the shared 2 x 2hf.
  const double moe_flops = 2.0 * h * e + 4.0 * h * l + k * 4.0 * l * f + 4.0 * h * f;
  const double plain_flops = 2.0 * h * e + k * 4.0 * h * f + 4.0 * h * f;
  EXPECT_NEAR(plain.model_flops_per_step(1) - m.model_flops_per_step(1),
              3.0 * 1024 * 2 * (plain_flops - moe_flops), 1.0);
}

// The dispatch and combine carry L-wide rows: with h 512 and L 128 the
// bytes are T_moe k L x 2, a quarter of what hidden-wide rows would carry.
TEST(LatentMoe, AllToAllCarriesLatentWidthRows) {
  Model m = latent_hybrid();
  m.layer_pattern = "EEEE";
  m.mamba_heads = m.mamba_head_dim = m.mamba_state_dim = m.mamba_groups = 0;
  ASSERT_TRUE(validate(m).ok()) << error_of(m);
  Plan plan = testing::layout_plan(1, 1, 4, 4);
  plan.expert_parallel = 4;
  plan.flash_attention = true;
  ASSERT_TRUE(validate(m, plan).ok()) << validate(m, plan).message();
  const Cluster cluster = testing::a100_cluster();
  const Recorder cost;
  lower_chunk(m, plan, place(plan, cluster), cost, 0);
  ASSERT_EQ(cost.all_to_alls().size(), 4u * 4);  // 4 layers x (2 forward + 2 backward)
  for (const CollectiveDesc& c : cost.all_to_alls()) EXPECT_EQ(c.bytes, 1024.0 * 4 * 128 * 2);
  // The grouped expert GEMMs: fc1 [m_e, L] x [L, f], fc2 [m_e, f] x [f, L];
  // the latent projections [T, h] x [h, L] and [T, L] x [L, h].
  int fc1 = 0, down = 0, up = 0;
  for (const KernelDesc& k : cost.kernels()) {
    if (k.pass != Pass::kForward) continue;
    if (k.kind == KernelKind::kExpertFc1Gemm) {
      EXPECT_EQ(k.gemm.k, 128);
      ++fc1;
    }
    if (k.kind == KernelKind::kExpertFc2Gemm) {
      EXPECT_EQ(k.gemm.n, 128);
    }
    if (k.kind == KernelKind::kFc1Gemm && k.gemm.n == 128 && k.gemm.k == 512) ++down;
    if (k.kind == KernelKind::kFc2Gemm && k.gemm.n == 512 && k.gemm.k == 128) ++up;
  }
  EXPECT_EQ(fc1, 4);
  EXPECT_EQ(down, 4);
  EXPECT_EQ(up, 4);
}

TEST(LatentMoe, BadValuesGiveOneLineErrorsNamingTheKey) {
  Model m = latent_hybrid();
  m.moe_latent_size = 1024;
  EXPECT_EQ(error_of(m), "model.moe_latent_size: must be at most 512, got 1024");
  m.moe_latent_size = -1;
  EXPECT_EQ(error_of(m), "model.moe_latent_size: must not be negative, got -1");
  Model dense = testing::gpt(2, 64, 4, 128, 100);
  dense.name.clear();
  dense.moe_latent_size = 32;
  EXPECT_EQ(error_of(dense), "model.moe_latent_size: needs experts (the model is dense)");
  m = latent_hybrid();
  m.mtp_shared_weights = true;
  EXPECT_EQ(error_of(m), "model.mtp_shared_weights: needs mtp_layers > 0");
  m.mtp_layers = 2;
  m.mtp_layer_pattern = "*X";
  EXPECT_EQ(error_of(m), "model.mtp_layer_pattern: character 'X' at 1 is not M, *, - or E");
  m.mtp_layer_pattern = "*-";
  EXPECT_EQ(error_of(m), "model.mtp_layer_pattern: has '-', which layer_pattern does not have");
  // From JSON: a negative value is refused by the reader, naming the key.
  Model from_json = latent_hybrid();
  const Status s = apply_model_json(boost::json::parse(R"({"moe_latent_size": -4})"), "m.json",
                                    &from_json);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("moe_latent_size"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
}

// A NemotronH Hugging Face config with moe_latent_size (the key as the
// transformers NemotronH config spells it) and two MTP layers.
TEST(LatentMoe, ReadFromAHuggingFaceConfig) {
  const boost::json::value v = boost::json::parse(R"({
    "architectures": ["NemotronHForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 8,
    "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128,
    "intermediate_size": 2688, "mlp_hidden_act": "relu2", "vocab_size": 131072,
    "hybrid_override_pattern": "MEMEM*EE", "mamba_num_heads": 128, "mamba_head_dim": 64,
    "ssm_state_size": 128, "n_groups": 8, "n_routed_experts": 512, "num_experts_per_tok": 22,
    "moe_intermediate_size": 2688, "n_shared_experts": 1,
    "moe_shared_expert_intermediate_size": 5376, "moe_latent_size": 1024,
    "num_nextn_predict_layers": 2, "tie_word_embeddings": false})");
  Result<HfModel> hf = model_from_hf_config(v, "super.json");
  ASSERT_TRUE(hf.ok()) << hf.status().message();
  EXPECT_EQ(hf->model.moe_latent_size, 1024);
  EXPECT_EQ(hf->model.mtp_layers, 2);
  EXPECT_EQ(hf->model.moe_shared_experts, 2);
  EXPECT_TRUE(validate(hf->model).ok()) << validate(hf->model).message();
}

// MTP depth 2 with an "*E" block: compute per depth whether or not the
// weights are shared; parameters once when shared, per depth otherwise.
TEST(MtpSharedWeights, CountsParametersOnceAndComputePerDepth) {
  Model base = latent_hybrid();
  Model own = base;
  own.mtp_layers = 2;
  own.mtp_layer_pattern = "*E";
  Model shared = own;
  shared.mtp_shared_weights = true;
  ASSERT_TRUE(validate(own).ok()) << error_of(own);
  ASSERT_TRUE(validate(shared).ok()) << error_of(shared);
  const int64_t h = 512;
  // One module: two input norms, eh_proj [2h -> h], the final norm, and the
  // block: the attention layer ('*', layer 1) and an MoE layer ('E').
  const int64_t module = 3 * h + 2 * h * h + base.layer_parameters(1) + base.layer_parameters(3);
  EXPECT_EQ(own.mtp_parameters(), 2 * module);
  EXPECT_EQ(shared.mtp_parameters(), module);
  EXPECT_EQ(shared.parameter_count(), base.parameter_count() + module);
  EXPECT_EQ(own.parameter_count(), base.parameter_count() + 2 * module);
  // Active: the module's MoE layer loses its idle experts once per copy.
  const int64_t idle = (16 - 4) * 2 * 128 * 256;
  EXPECT_EQ(shared.active_parameter_count(), base.active_parameter_count() + module - idle);
  // FLOPs: two depths either way.
  EXPECT_DOUBLE_EQ(shared.model_flops_per_step(8), own.model_flops_per_step(8));
  Model one = own;
  one.mtp_layers = 1;
  EXPECT_NEAR(own.model_flops_per_step(8) - base.model_flops_per_step(8),
              2.0 * (one.model_flops_per_step(8) - base.model_flops_per_step(8)), 1.0);

  // Lowered on one stage: the same kernels (compute per depth), the shared
  // module's parameters and gradients once.
  Plan plan = testing::layout_plan(1, 1, 2, 2);
  plan.expert_parallel = 2;
  plan.flash_attention = true;
  const Cluster cluster = testing::a100_cluster();
  const Recorder c_own, c_shared;
  const ChunkProgram p_own = lower_chunk(own, plan, place(plan, cluster), c_own, 0);
  const ChunkProgram p_shared = lower_chunk(shared, plan, place(plan, cluster), c_shared, 0);
  EXPECT_EQ(c_own.kernels().size(), c_shared.kernels().size());
  EXPECT_EQ(p_own.forward.size(), p_shared.forward.size());
  const double module_on_rank = p_own.parameters - p_shared.parameters;
  EXPECT_GT(module_on_rank, 0.0);
  double ready_own = 0, ready_shared = 0;
  for (const LoweredOp& op : p_own.backward) ready_own += op.grad_ready_bytes + op.expert_grad_ready_bytes;
  for (const LoweredOp& op : p_shared.backward) {
    ready_shared += op.grad_ready_bytes + op.expert_grad_ready_bytes;
  }
  EXPECT_NEAR(ready_own - ready_shared, module_on_rank * plan.grad_reduce_bytes(), 1.0);
}

// The presets against NVIDIA's figures: Nemotron 3 Super "120B total, 12B
// active" (research.nvidia.com/labs/nemotron/Nemotron-3-Super), 12.7B active
// with embeddings as quoted at release; Lightning = the Nano shape + one
// shared MTP module.
TEST(LatentMoe, PresetsMatchThePublishedCounts) {
  const Model super = testing::preset_model("nemotron3-super");
  const int64_t mtp = super.mtp_parameters();
  EXPECT_NEAR(static_cast<double>(super.parameter_count() - mtp) / 120e9, 1.0, 0.01);
  // Active, both embedding tables counted (as MODELS.md counts them).
  const int64_t mtp_active = mtp - 2LL * (512 - 22) * 2 * 1024 * 2688;
  EXPECT_NEAR(static_cast<double>(super.active_parameter_count() - mtp_active) / 12.7e9, 1.0, 0.01);
  EXPECT_EQ(super.num_moe_layers(), 40);
  EXPECT_EQ(super.mtp_block_layers().size(), 2u);

  const Model nano = testing::preset_model("nemotron3-nano");
  const Model lightning = testing::preset_model("nemotron3.5-lightning");
  const int64_t h = 2688;
  const int64_t module = 3 * h + 2 * h * h + nano.layer_parameters(5) + nano.layer_parameters(1);
  EXPECT_EQ(lightning.parameter_count(), nano.parameter_count() + module);
}

// Every Nemotron 3 Super and Nemotron 3.5 Lightning row of the shipped
// Blackwell runs file maps to its preset with nothing missing.
TEST(LatentMoe, BlackwellRowsAreExpressible) {
  const presets::Catalog catalog = testing::builtin_catalog();
  const std::string path = std::string(LLMPLAN_DATA_DIR) + "/blackwell/published_runs.csv";
  Result<std::vector<planner::PublishedRun>> runs = planner::read_runs_file(path, "", catalog);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  int super = 0, lightning = 0;
  for (const planner::PublishedRun& r : *runs) {
    // Row names start with the models table's name (Nemotron_3_Super,
    // Nemotron_3_5_Lightning in the runs file).
    const bool is_super = r.name.rfind("nemotron3-super_", 0) == 0;
    const bool is_lightning = r.name.rfind("nemotron3.5-lightning_", 0) == 0;
    if (!is_super && !is_lightning) continue;
    EXPECT_TRUE(r.missing.empty()) << r.name << ": " << r.missing.front();
    if (!r.missing.empty()) continue;
    EXPECT_EQ(r.config.model.mtp_layers, 2) << r.name;
    EXPECT_EQ(r.config.model.mtp_shared_weights, is_lightning) << r.name;
    EXPECT_EQ(r.config.model.moe_latent_size, is_super ? 1024 : 0) << r.name;
    (is_super ? super : lightning) += 1;
  }
  EXPECT_EQ(super, 14);
  EXPECT_EQ(lightning, 1);
}

}  // namespace
}  // namespace llmplan::simulator

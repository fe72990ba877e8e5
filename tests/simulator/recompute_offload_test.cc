// Megatron-Core's selective recompute modules (Plan::recompute_modules:
// layernorm, moe_act, mla_up_proj) and activation CPU offloading
// (Plan::cpu_offload_layers): what each saves in memory.h, what the
// lowering adds as recompute or exposed copy time, and the one-line errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "presets/catalog.h"
#include "simulator/memory.h"
#include "simulator/model.h"
#include "simulator/plan.h"
#include "simulator/plan_json.h"
#include "simulator/simulate.h"
#include "tests/simulator/expect_rel.h"
#include "tests/simulator/test_cluster.h"
#include "tests/simulator/test_models.h"
#include "tests/simulator/test_presets.h"

namespace llmplan::simulator {
namespace {

using testing::llama_like;
using testing::moe_like;
using testing::preset_cluster;
using testing::preset_model;

Plan plan_of(int d, int ep = 1) {
  Plan plan = testing::expert_plan(1, 1, d, ep, 4 * d);
  plan.dropout = false;
  return plan;
}

TEST(RecomputeModules, MoeActDropsTheExpertsFc2Input) {
  const Model m = moe_like();
  Plan plan = plan_of(8, 8);
  const double base = moe_layer_activation_bytes(m, plan);
  plan.recompute_modules = kRecomputeMoeAct;
  // R = k T rows of f_e bf16 FC2 inputs: 4 x 4096 x 1408 x 2 bytes.
  EXPECT_REL(base - moe_layer_activation_bytes(m, plan), 4.0 * 4096 * 1408 * 2);
  // In FP8 the FC2 input copy is 1 byte per element.
  Plan fp8 = plan_of(8, 8);
  fp8.precision = Precision::kFp8;
  const double fp8_base = moe_layer_activation_bytes(m, fp8);
  fp8.recompute_modules = kRecomputeMoeAct;
  EXPECT_REL(fp8_base - moe_layer_activation_bytes(m, fp8), 4.0 * 4096 * 1408 * 1);
  // A dense layer has no experts: unchanged.
  EXPECT_REL(layer_activation_bytes(llama_like(), plan), layer_activation_bytes(llama_like(), plan_of(8)));
}

TEST(RecomputeModules, ActivationClampKeepsASecondFc1OutputUnlessMoeActIsRecomputed) {
  // Model::activation_clamp (GPT-OSS): the clamps keep FC1's output and the
  // fused activation saves the clamped copy: R = k T rows of 2 f_e bf16
  // more (4 x 4096 x 2 x 1408 x 2 bytes). With moe_act recomputed neither
  // is held.
  Model m = moe_like();
  const Plan plan = plan_of(8, 8);
  const double base = moe_layer_activation_bytes(m, plan);
  m.activation_clamp = 7.0;
  EXPECT_REL(moe_layer_activation_bytes(m, plan) - base, 4.0 * 4096 * 2 * 1408 * 2);
  Plan act = plan;
  act.recompute_modules = kRecomputeMoeAct;
  EXPECT_REL(moe_layer_activation_bytes(m, act), moe_layer_activation_bytes(moe_like(), act));
}

TEST(RecomputeModules, LayernormDropsTheRouterInput) {
  const Model m = moe_like();
  Plan plan = plan_of(8, 8);
  const double base = moe_layer_activation_bytes(m, plan);
  plan.recompute_modules = kRecomputeLayernorm;
  EXPECT_REL(base - moe_layer_activation_bytes(m, plan), 4096.0 * 2048 * 2);
}

TEST(RecomputeModules, MlaUpProjDropsAttentionsQkvAndAddsRecomputeTime) {
  const Model m = preset_model("deepseek-v3");
  Plan plan = plan_of(64, 64);
  plan.pipeline_parallel = 4;
  plan.virtual_stages = 4;
  plan.schedule = Schedule::kInterleaved;
  plan.global_batch_size = 1024;
  plan.distributed_optimizer = true;
  ASSERT_TRUE(validate(m, plan).ok()) << validate(m, plan).message();
  const double base = moe_layer_activation_bytes(m, plan);
  Plan up = plan;
  up.recompute_modules = kRecomputeMlaUpProj;
  ASSERT_TRUE(validate(m, up).ok());
  // q and k (a x 192 each) and v (a x 128) in bf16 per token, 128 heads.
  const double a = m.num_heads, tokens = m.seq_length;
  EXPECT_REL(base - moe_layer_activation_bytes(m, up), tokens * 2.0 * (2.0 * a * 192 + a * 128));

  const Cluster gb200 = preset_cluster("gb200-nvl72");
  Result<StepReport> r0 = simulate(m, plan, gb200);
  Result<StepReport> r1 = simulate(m, up, gb200);
  ASSERT_TRUE(r0.ok()) << r0.status().message();
  ASSERT_TRUE(r1.ok()) << r1.status().message();
  EXPECT_GT(r1->iteration_time_s, r0->iteration_time_s);
  EXPECT_LT(r1->peak_memory_bytes, r0->peak_memory_bytes);
  // A model without latent attention has nothing to recompute.
  Plan dense = plan_of(8);
  dense.recompute_modules = kRecomputeMlaUpProj;
  const Status s = validate(llama_like(), dense);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("plan.recompute_modules"), std::string::npos) << s.message();
}

TEST(RecomputeModules, MoeActAndLayernormAddRecomputeTime) {
  const Model m = moe_like();
  Plan plan = plan_of(8, 8);
  plan.distributed_optimizer = true;
  const Cluster c = testing::a100_cluster();
  Result<StepReport> r0 = simulate(m, plan, c);
  plan.recompute_modules = kRecomputeMoeAct | kRecomputeLayernorm;
  Result<StepReport> r1 = simulate(m, plan, c);
  ASSERT_TRUE(r0.ok() && r1.ok());
  EXPECT_GT(r1->iteration_time_s, r0->iteration_time_s);
  EXPECT_LT(r1->peak_memory_bytes, r0->peak_memory_bytes);
  EXPECT_GT(r1->breakdown.recompute_s, r0->breakdown.recompute_s);
}

// Megatron-Core checkpoints the attention core under selective recompute
// whatever its kernel, so with flash attention the fused forward runs again
// in the backward (time); what it frees is held anyway (memory unchanged).
TEST(RecomputeModules, CoreAttnRerunsTheFusedAttentionForward) {
  const Cluster c = preset_cluster("gb200-nvl72");
  for (const Model& m : {llama_like(), preset_model("deepseek-v3")}) {
    Plan plan = plan_of(8);
    if (m.is_moe()) {
      plan = plan_of(64, 64);
      plan.pipeline_parallel = 4;
      plan.virtual_stages = 4;
      plan.schedule = Schedule::kInterleaved;
      plan.global_batch_size = 1024;
      plan.distributed_optimizer = true;
    }
    ASSERT_TRUE(plan.flash_attention);
    Result<StepReport> none = simulate(m, plan, c);
    plan.recompute = Recompute::kSelective;
    Result<StepReport> core = simulate(m, plan, c);
    ASSERT_TRUE(none.ok()) << none.status().message();
    ASSERT_TRUE(core.ok()) << core.status().message();
    EXPECT_GT(core->breakdown.recompute_s, none->breakdown.recompute_s) << m.name;
    EXPECT_GT(core->iteration_time_s, none->iteration_time_s) << m.name;
    EXPECT_EQ(core->peak_memory_bytes, none->peak_memory_bytes) << m.name;
  }
}

TEST(RecomputeModules, JsonRoundTripAndErrors) {
  Plan plan;
  ASSERT_TRUE(apply_plan_json(
                  testing::parse_json(R"({"recompute_modules": ["core_attn", "moe_act", "layernorm"]})"),
                  "plan", &plan)
                  .ok());
  EXPECT_EQ(plan.recompute, Recompute::kSelective);
  EXPECT_EQ(plan.recompute_modules, static_cast<uint32_t>(kRecomputeMoeAct | kRecomputeLayernorm));
  Plan back;
  ASSERT_TRUE(apply_plan_json(plan_to_json(plan), "plan", &back).ok());
  EXPECT_EQ(back, plan);

  Plan bad;
  const Status s =
      apply_plan_json(testing::parse_json(R"({"recompute_modules": ["moe_mlp"]})"), "plan", &bad);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("recompute_modules"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find('\n'), std::string::npos);

  Plan full;
  full.recompute = Recompute::kFull;
  full.recompute_modules = kRecomputeMoeAct;
  EXPECT_FALSE(validate(full).ok());
}

// A dense model on one GB200 NVL72 rack at p = 1 with the first N layers'
// activations offloaded.
Plan offload_plan(int layers_offloaded) {
  Plan plan = plan_of(8);
  plan.micro_batch_size = 2;
  plan.global_batch_size = 32;
  plan.zero_stage = 3;
  plan.precision = Precision::kFp8;
  plan.fp8_recipe = Fp8Recipe::kCurrent;
  plan.cpu_offload_layers = layers_offloaded;
  return plan;
}

TEST(CpuOffload, OffloadedLayersLeaveTheGpuButTheOneInTransit) {
  const Model m = llama_like();
  const Plan none = offload_plan(0);
  const Plan six = offload_plan(6);
  ASSERT_TRUE(validate(m, six).ok()) << validate(m, six).message();
  const double per_layer = layer_activation_bytes(m, six);
  const auto mem0 = stage_memory(m, none, stage_parameters_per_device(m, none), 0);
  const auto mem6 = stage_memory(m, six, stage_parameters_per_device(m, six), 0);
  // Five leave for good; the one in transit is on the GPU only while the
  // logits are not, and these (128256 columns) are the larger: the peak
  // holds them and not it (EarlierHandlersLayerInTransit... below).
  ASSERT_GT(mem6[0].logits_bytes, per_layer);
  EXPECT_REL(mem0[0].activation_bytes - mem6[0].activation_bytes, 6.0 * per_layer);
}

// Transformer Engine's refactored offload handler (Plan::cpu_offload_v1
// false) keeps none of the offloaded layers on the GPU at the peak: the
// stored activations are those of the l - N layers that stay.
TEST(CpuOffload, RefactoredHandlerKeepsNoLayerInTransit) {
  const Model m = llama_like();
  Plan v2 = offload_plan(6);
  v2.cpu_offload_v1 = false;
  ASSERT_TRUE(validate(m, v2).ok()) << validate(m, v2).message();
  const double per_layer = layer_activation_bytes(m, v2);
  const Plan none = offload_plan(0);
  const auto mem0 = stage_memory(m, none, stage_parameters_per_device(m, none), 0);
  const auto mem_v1 = stage_memory(m, offload_plan(6), stage_parameters_per_device(m, v2), 0);
  const auto mem_v2 = stage_memory(m, v2, stage_parameters_per_device(m, v2), 0);
  EXPECT_REL(mem0[0].activation_bytes - mem_v2[0].activation_bytes, 6.0 * per_layer);
  // The earlier handler's layer in transit is not on the GPU while the
  // logits are (next test); here the logits (128256 columns) are larger.
  ASSERT_GT(mem_v1[0].logits_bytes, per_layer);
  EXPECT_NEAR(mem_v1[0].activation_bytes, mem_v2[0].activation_bytes, 1e-9 * per_layer);
  // Memory only: the step time is the same.
  const Cluster c = preset_cluster("gb200-nvl72");
  Result<StepReport> r1 = simulate(m, offload_plan(6), c);
  Result<StepReport> r2 = simulate(m, v2, c);
  ASSERT_TRUE(r1.ok() && r2.ok());
  EXPECT_EQ(r1->iteration_time_s, r2->iteration_time_s);
  EXPECT_LE(r2->peak_memory_bytes, r1->peak_memory_bytes);
}

// Transformer Engine's earlier offload handler (Plan::cpu_offload_v1) frees
// the last offloaded layer's GPU copy at the last layer's forward commit and
// reloads it at that layer's backward commit, so that layer and the logits
// (made and freed in between) are never on the GPU at once: the peak holds
// the larger of the two. With a small vocabulary the layer is the larger.
TEST(CpuOffload, EarlierHandlersLayerInTransitAndTheLogitsAreNotOnTheGpuAtOnce) {
  Model m = llama_like();
  m.vocab_size = 1024;
  const Plan v1 = offload_plan(6);
  Plan v2 = v1;
  v2.cpu_offload_v1 = false;
  ASSERT_TRUE(validate(m, v1).ok()) << validate(m, v1).message();
  const double per_layer = layer_activation_bytes(m, v1);
  const auto mem_v1 = stage_memory(m, v1, stage_parameters_per_device(m, v1), 0);
  const auto mem_v2 = stage_memory(m, v2, stage_parameters_per_device(m, v2), 0);
  const double logits = mem_v1[0].logits_bytes;
  ASSERT_GT(logits, 0);
  ASSERT_LT(logits, per_layer);
  EXPECT_REL(mem_v1[0].activation_bytes - mem_v2[0].activation_bytes, per_layer - logits);
  EXPECT_REL(mem_v1[0].total_bytes() - mem_v2[0].total_bytes(),
             (per_layer - logits) * (1 + kAllocatorFragmentation));
}

TEST(CpuOffload, CopiesAreHiddenUnderComputeUnlessTheLinkIsSlow) {
  const Model m = llama_like();
  Cluster c = preset_cluster("gb200-nvl72");
  ASSERT_GT(c.host_link_bytes_per_s, 0.0);
  Result<StepReport> r0 = simulate(m, offload_plan(0), c);
  Result<StepReport> fast = simulate(m, offload_plan(6), c);
  ASSERT_TRUE(r0.ok()) << r0.status().message();
  ASSERT_TRUE(fast.ok()) << fast.status().message();
  // 0.5 GB of a layer's activations per 2 x 4096 tokens at 225 GB/s (2 ms)
  // hide under a layer's forward and backward on this model only when the
  // layer takes longer; either way the step is never faster than without.
  EXPECT_GE(fast->iteration_time_s, r0->iteration_time_s - 1e-12);
  // A host link a thousand times slower leaves the copies exposed.
  c.host_link_bytes_per_s /= 1000.0;
  Result<StepReport> slow = simulate(m, offload_plan(6), c);
  ASSERT_TRUE(slow.ok());
  const double copy_s = layer_activation_bytes(m, offload_plan(6)) / c.host_link_bytes_per_s;
  EXPECT_GT(slow->breakdown.cpu_offload_s, 0.0);
  // Two copies (offload, reload) per offloaded layer and micro-batch, each
  // exposed by at most its own time.
  const int micro_batches = offload_plan(6).num_micro_batches();
  EXPECT_LE(slow->breakdown.cpu_offload_s, 2.0 * 6 * micro_batches * copy_s * (1 + 1e-9));
  EXPECT_GT(slow->breakdown.cpu_offload_s, 2.0 * 6 * micro_batches * copy_s * 0.5);
  EXPECT_GT(slow->iteration_time_s, fast->iteration_time_s);
}

TEST(CpuOffload, OneLineErrors) {
  const Model m = llama_like();
  auto message = [&](const Plan& plan, const Cluster& c) {
    Result<StepReport> r = simulate(m, plan, c);
    EXPECT_FALSE(r.ok());
    const std::string msg = r.ok() ? std::string() : r.status().message();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    return msg;
  };
  const Cluster gb200 = preset_cluster("gb200-nvl72");
  Plan pp = offload_plan(4);
  pp.pipeline_parallel = 2;
  EXPECT_NE(message(pp, gb200).find("plan.cpu_offloading_num_layers"), std::string::npos);
  Plan all = offload_plan(16);
  EXPECT_NE(message(all, gb200).find("plan.cpu_offloading_num_layers"), std::string::npos);
  Plan recompute = offload_plan(4);
  recompute.recompute = Recompute::kSelective;
  EXPECT_NE(message(recompute, gb200).find("recomputation"), std::string::npos);
  // A cluster without a host link figure (the DGX presets): refused.
  const std::string msg = message(offload_plan(4), preset_cluster("dgx-b200"));
  EXPECT_NE(msg.find("plan.cpu_offloading_num_layers"), std::string::npos) << msg;
  EXPECT_NE(msg.find("dgx-b200"), std::string::npos) << msg;
  // JSON key and round trip.
  Plan plan;
  ASSERT_TRUE(apply_plan_json(testing::parse_json(R"({"cpu_offloading_num_layers": 5})"), "plan",
                              &plan)
                  .ok());
  EXPECT_EQ(plan.cpu_offload_layers, 5);
  Plan back;
  ASSERT_TRUE(apply_plan_json(plan_to_json(plan), "plan", &back).ok());
  EXPECT_EQ(back.cpu_offload_layers, 5);
  EXPECT_TRUE(back.cpu_offload_v1);
  EXPECT_FALSE(plan_to_json(plan).as_object().contains("cpu_offload_v1"));
  Plan v2;
  const char* v2_json = R"({"cpu_offloading_num_layers": 5, "cpu_offload_v1": false})";
  ASSERT_TRUE(apply_plan_json(testing::parse_json(v2_json), "plan", &v2).ok());
  EXPECT_FALSE(v2.cpu_offload_v1);
  Plan v2_back;
  ASSERT_TRUE(apply_plan_json(plan_to_json(v2), "plan", &v2_back).ok());
  EXPECT_FALSE(v2_back.cpu_offload_v1);
  Plan negative;
  EXPECT_FALSE(
      apply_plan_json(testing::parse_json(R"({"cpu_offloading_num_layers": -1})"), "plan", &negative)
          .ok());
}

}  // namespace
}  // namespace llmplan::simulator

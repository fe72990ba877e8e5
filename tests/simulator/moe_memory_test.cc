// Memory of mixture-of-experts plans (simulator/memory.h): expert state
// sharded over ep and ZeRO over edp, MoE activations, the dense limit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "presets/catalog.h"
#include "simulator/memory.h"
#include "simulator/model.h"
#include "simulator/plan.h"
#include "simulator/schedule.h"
#include "tests/simulator/expect_rel.h"
#include "tests/simulator/test_cluster.h"
#include "tests/simulator/test_presets.h"

namespace llmplan::simulator {
namespace {

using testing::llama_like;
using testing::moe_like;

Plan moe_plan(int t, int p, int d, int ep) {
  Plan plan = testing::expert_plan(t, p, d, ep, 8 * d);
  plan.sequence_parallel = t > 1;
  plan.dropout = false;
  return plan;
}

std::vector<MemoryBreakdown> memory(const Model& m, const Plan& plan) {
  EXPECT_TRUE(validate(m).ok());
  const Status s = validate(m, plan);
  EXPECT_TRUE(s.ok()) << s.message();
  return stage_memory(m, plan, stage_parameters_per_device(m, plan), 0);
}

double peak(const std::vector<MemoryBreakdown>& stages) {
  double out = 0;
  for (const MemoryBreakdown& mb : stages) out = std::max(out, mb.total_bytes());
  return out;
}

TEST(MoeMemory, ExpertParametersPerDevice) {
  const Model m = moe_like();
  const Plan plan = moe_plan(2, 1, 4, 4);
  // 16 experts x 3 h f_e over ep x etp = 4.
  EXPECT_REL(expert_parameters_per_device(m, plan), 16.0 * 3 * 2048 * 1408 / 4);
  // An MoE layer: attention, norms and router over t = 2, experts over 4.
  const double attention = 2048.0 * (2048 + 2 * 512) + 2048.0 * 2048 + 2 * 2048;
  EXPECT_REL(layer_parameters_per_device(m, plan, 0),
             (attention + 2048.0 * 16) / 2 + 16.0 * 3 * 2048 * 1408 / 4);
  const std::vector<double> params = stage_parameters_per_device(m, plan);
  ASSERT_EQ(params.size(), 1u);
  EXPECT_REL(params[0],
             16 * layer_parameters_per_device(m, plan, 0) + 2 * 32000.0 * 2048 / 2 + 2048);
  // Dense model: the lowering's count (layer_parameters / t).
  const Model d = llama_like();
  Plan dp = moe_plan(2, 2, 4, 1);
  EXPECT_EQ(expert_parameters_per_device(d, dp), 0.0);
  const std::vector<double> dense = stage_parameters_per_device(d, dp);
  EXPECT_REL(dense[0], 8 * static_cast<double>(d.layer_parameters()) / 2 + 32000.0 * 2048 / 2);
  EXPECT_REL(dense[1],
             8 * static_cast<double>(d.layer_parameters()) / 2 + 32000.0 * 2048 / 2 + 2048);
}

TEST(MoeMemory, FirstLayerOfChunk) {
  Model m = moe_like();
  m.num_layers = 10;
  Plan plan = moe_plan(1, 2, 4, 1);
  plan.schedule = Schedule::kInterleaved;
  plan.virtual_stages = 2;  // 4 chunks of 2, 2, 3, 3 layers
  int next = 0;
  for (int c = 0; c < 4; ++c) {
    EXPECT_EQ(first_layer_of_chunk(m, plan, c), next) << c;
    next += layers_in_chunk(m, plan, c);
  }
  EXPECT_EQ(next, 10);
}

TEST(MoeMemory, DoublingEpHalvesExpertState) {
  const Model m = moe_like();
  for (int stage : {0, 1, 3}) {
    // ep 2 -> 4 with edp fixed at 4 (d 8 -> 16): the expert bytes halve.
    Plan two = moe_plan(1, 1, 8, 2), four = moe_plan(1, 1, 16, 4);
    two.zero_stage = four.zero_stage = stage;
    const MemoryBreakdown a = memory(m, two)[0], b = memory(m, four)[0];
    ASSERT_EQ(two.expert_data_parallel(), four.expert_data_parallel());
    EXPECT_REL(b.expert_parameters, a.expert_parameters / 2);
    EXPECT_REL(expert_state_bytes_per_parameter(two), expert_state_bytes_per_parameter(four));
    const double expert_a = a.expert_parameters * expert_state_bytes_per_parameter(two);
    const double expert_b = b.expert_parameters * expert_state_bytes_per_parameter(four);
    EXPECT_REL(expert_b, expert_a / 2);
    // The dense part is the same parameters, sharded over d: the rest of the
    // difference.
    const double dense = a.parameters - a.expert_parameters;
    EXPECT_REL(b.parameters - b.expert_parameters, dense);
    EXPECT_REL(a.weights_and_optimizer_bytes, dense * state_bytes_per_parameter(two) + expert_a);
    EXPECT_REL(b.weights_and_optimizer_bytes, dense * state_bytes_per_parameter(four) + expert_b);
    if (stage == 0) {
      EXPECT_REL(a.weights_and_optimizer_bytes - b.weights_and_optimizer_bytes, expert_b);
    }
  }
}

TEST(MoeMemory, ExpertOptimizerStateShardedOverExpertDataParallel) {
  const Model m = moe_like();
  // t 2, d 16: 32 ranks per stage. ep 4: edp 8; ep 16: edp 2.
  Plan plan = moe_plan(2, 1, 16, 4);
  plan.distributed_optimizer = true;
  ASSERT_EQ(plan.expert_data_parallel(), 8);
  EXPECT_REL(expert_state_bytes_per_parameter(plan), 6.0 + 12.0 / 8);
  EXPECT_REL(state_bytes_per_parameter(plan), 6.0 + 12.0 / 16);
  const MemoryBreakdown a = memory(m, plan)[0];
  EXPECT_REL(a.expert_parameters, 16 * 16.0 * 3 * 2048 * 1408 / 4);
  EXPECT_REL(a.weights_and_optimizer_bytes,
             (a.parameters - a.expert_parameters) * (6.0 + 12.0 / 16) +
                 a.expert_parameters * (6.0 + 12.0 / 8));
  plan.expert_parallel = 16;
  EXPECT_REL(expert_state_bytes_per_parameter(plan), 6.0 + 12.0 / 2);
  // ZeRO-2 and 3 shard expert gradients and parameters over edp too.
  plan.zero_stage = 2;
  EXPECT_REL(expert_state_bytes_per_parameter(plan), 2.0 + 16.0 / 2);
  plan.zero_stage = 3;
  EXPECT_REL(expert_state_bytes_per_parameter(plan), 16.0 / 2);
  // edp 1 (every expert-parallel group holds distinct experts): unsharded.
  plan.expert_parallel = 32 / 2;
  plan.expert_tensor_parallel = 2;
  ASSERT_EQ(plan.expert_data_parallel(), 1);
  plan.zero_stage = 0;
  EXPECT_REL(expert_state_bytes_per_parameter(plan), 6.0 + 12.0);
}

// One expert, top-1, with the expert layer laid out as the dense MLP (etp =
// t, ep 1): the dense model's memory but for the router and the permuted
// copy of the tokens. The state differs by the router's h parameters per
// layer; with full recompute (the layer input only is stored) the totals
// agree within 1 % (one layer's dispatch / combine buffers apart); without,
// each layer stores in addition the router's input and scores and the
// permuted tokens (the grouped GEMM's own copy of its input): T (2 h + 13)
// bytes at t = 1, about 6 % of this layer's activations.
TEST(MoeMemory, OneExpertTopOneIsTheDenseModel) {
  // Mistral-7B's shape (Mixtral 8x7B's layers with one expert).
  Model dense = testing::modern_model("gpt-test", 32, 4096, 32, 14336, 4096, 32000);
  dense.num_kv_heads = 8;
  Model one = dense;
  one.num_experts = 1;
  one.moe_top_k = 1;
  EXPECT_EQ(one.parameter_count() - dense.parameter_count(), 32LL * 4096);
  const double s = 4096, h = 4096;
  for (int t : {1, 2}) {
    for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
      Plan dense_plan = moe_plan(t, 2, 4, 1);
      dense_plan.recompute = r;
      dense_plan.distributed_optimizer = true;
      Plan plan = dense_plan;
      plan.expert_tensor_parallel = t;
      ASSERT_EQ(plan.expert_data_parallel(), 4);
      const std::vector<MemoryBreakdown> a = memory(dense, dense_plan), b = memory(one, plan);
      const double delta =
          moe_layer_activation_bytes(one, plan) - layer_activation_bytes(dense, dense_plan);
      for (int st = 0; st < 2; ++st) {
        // Router parameters only (h per layer).
        EXPECT_NEAR(b[st].weights_and_optimizer_bytes, a[st].weights_and_optimizer_bytes,
                    1e-3 * a[st].weights_and_optimizer_bytes);
        EXPECT_GT(b[st].weights_and_optimizer_bytes, a[st].weights_and_optimizer_bytes);
        // The activations differ by the MoE layers' extra buffers, exactly.
        const std::vector<int> live = peak_in_flight(plan, st);
        EXPECT_REL(b[st].activation_bytes - a[st].activation_bytes, live[0] * 16 * delta);
        EXPECT_GE(delta, 0.0);
        EXPECT_GT(b[st].total_bytes(), a[st].total_bytes());
        if (r == Recompute::kFull) {
          EXPECT_EQ(delta, 0.0);
          EXPECT_NEAR(b[st].total_bytes(), a[st].total_bytes(), 0.01 * a[st].total_bytes())
              << "t " << t << " stage " << st;
        } else {
          EXPECT_NEAR(b[st].total_bytes(), a[st].total_bytes(), 0.1 * a[st].total_bytes())
              << "t " << t << " stage " << st;
        }
      }
      if (t == 1 && r != Recompute::kFull) {
        EXPECT_REL(delta, s * (2 * h + 13.0));
      }
    }
  }
}

TEST(MoeMemory, ImbalanceRaisesActivations) {
  const Model m = moe_like();
  Plan plan = moe_plan(2, 2, 8, 8);
  const double balanced = moe_layer_activation_bytes(m, plan);
  const double balanced_buffers = moe_buffer_bytes(m, plan);
  const double balanced_peak = peak(memory(m, plan));
  plan.moe_imbalance = 2.0;
  const double skewed = moe_layer_activation_bytes(m, plan);
  EXPECT_GT(skewed, balanced);
  // The routed experts' rows double: R (g h + (2 c_1 + g) f_e / etp + 4).
  const double rows = 4 * 4096.0 / 2;  // k T_moe etp, balanced
  const double routed = rows * (2.0 * 2048 + 6.0 * 1408 + 4.0);
  EXPECT_REL(skewed - balanced, routed);
  EXPECT_GT(moe_buffer_bytes(m, plan), balanced_buffers);
  EXPECT_GT(peak(memory(m, plan)), balanced_peak);
  // A capacity factor pads every expert to c x the balanced share, whatever
  // the imbalance (the excess is dropped).
  Model capped = m;
  capped.moe_capacity_factor = 1.5;
  EXPECT_REL(moe_layer_activation_bytes(capped, plan) - balanced, 0.5 * routed);
  // Full recompute keeps only the layer input, imbalanced or not.
  plan.recompute = Recompute::kFull;
  EXPECT_REL(moe_layer_activation_bytes(m, plan), 2.0 * 4096 * 2048 / 2);
}

TEST(MoeMemory, ExpertTensorParallelGathersTokens) {
  // etp 2: each rank gets the tokens of its etp pair (2 k T_moe rows) but
  // only half of each expert's FFN; the FC1 input doubles, FFN activations
  // stay.
  const Model m = moe_like();
  Plan one = moe_plan(2, 1, 8, 4), two = one;
  two.expert_tensor_parallel = 2;
  const double rows = 4 * 4096.0 / 2;
  EXPECT_REL(moe_layer_activation_bytes(m, two) - moe_layer_activation_bytes(m, one),
             rows * (2.0 * 2048 + 4.0));
  EXPECT_REL(expert_parameters_per_device(m, two), expert_parameters_per_device(m, one) / 2);
}

TEST(MoeMemory, Fp8CachesExpertWeights) {
  const Model m = moe_like();
  Plan plan = moe_plan(1, 1, 8, 8);
  const MemoryBreakdown bf16 = memory(m, plan)[0];
  plan.precision = Precision::kFp8;
  const MemoryBreakdown fp8 = memory(m, plan)[0];
  const double layer_params = 16 * layer_parameters_per_device(m, plan, 0);
  EXPECT_REL(fp8.weights_and_optimizer_bytes - bf16.weights_and_optimizer_bytes,
             2.0 * layer_params);
  EXPECT_LT(fp8.activation_bytes, bf16.activation_bytes);
}

TEST(MoeMemory, MoeEveryOtherLayer) {
  // Layers 1, 3, 5, ... are MoE (first dense 1, every 2): stage 0 of p 2
  // holds 4 of them and 4 dense layers.
  Model m = moe_like();
  m.moe_first_dense = 1;
  m.moe_layer_every = 2;
  Plan plan = moe_plan(1, 2, 4, 4);
  const std::vector<MemoryBreakdown> stages = memory(m, plan);
  EXPECT_REL(stages[0].expert_parameters, 4 * expert_parameters_per_device(m, plan));
  EXPECT_REL(stages[1].expert_parameters, 4 * expert_parameters_per_device(m, plan));
  const std::vector<int> live = peak_in_flight(plan, 0);
  // No dropout (moe_plan): no embedding mask; the embedding's output is the
  // first layer's input, counted in its activations.
  EXPECT_REL(stages[0].activation_bytes, live[0] * (4 * layer_activation_bytes(m, plan) +
                                                    4 * moe_layer_activation_bytes(m, plan)));
}

TEST(MoeMemory, ZeroBubbleCountsExpertWeightGradients) {
  const Model m = moe_like();
  Plan plan = moe_plan(1, 4, 4, 4);
  plan.schedule = Schedule::kZbH1;
  const double wg = moe_layer_weight_grad_bytes(m, plan);
  // QKV, out-proj, router, routed experts (k T rows of FC1 h + 2 f_e, FC2 f_e + h).
  const double s = 4096, h = 2048, fe = 1408;
  EXPECT_REL(
      wg, 2.0 * (s * ((h + 3072) + (2048 + h)) + s * (h + 16) + 4 * s * ((h + 2 * fe) + (fe + h))));
  const std::vector<MemoryBreakdown> stages = memory(m, plan);
  EXPECT_GT(stages[0].activation_bytes, 0.0);
  EXPECT_GT(stages[0].in_flight_micro_batches, 0);
}

TEST(MoeMemory, FrameworkBuffersCountExpertGroups) {
  constexpr double kNccl = 0.5 * 1024 * 1024 * 1024;
  Plan plan = moe_plan(2, 1, 16, 1);
  const double base = framework_buffer_bytes(plan);  // tp and dp communicators
  plan.expert_parallel = 4;                          // + the ep group and the edp group (8 ranks)
  EXPECT_REL(framework_buffer_bytes(plan), base + 2 * kNccl);
  plan.expert_parallel = 32;  // edp 1: the ep group only
  EXPECT_REL(framework_buffer_bytes(plan), base + kNccl);
  plan.expert_parallel = 8;
  plan.expert_tensor_parallel = 4;  // ep, edp 1, and etp 4 != t 2
  EXPECT_REL(framework_buffer_bytes(plan), base + 2 * kNccl);
  // etp = t, ep 1: the expert layout is the dense one (no new group).
  plan.expert_parallel = 1;
  plan.expert_tensor_parallel = 2;
  EXPECT_REL(framework_buffer_bytes(plan), base);
}

TEST(MoeMemory, DenseModelHasNoMoeTerms) {
  const Model m = llama_like();
  Plan plan = moe_plan(2, 2, 4, 1);
  plan.distributed_optimizer = true;
  for (const MemoryBreakdown& mb : memory(m, plan)) {
    EXPECT_EQ(mb.expert_parameters, 0.0);
    EXPECT_EQ(mb.moe_buffer_bytes, 0.0);
  }
  EXPECT_EQ(moe_buffer_bytes(m, plan), 0.0);
}

// Qwen3-235B-A22B on NVIDIA's published Megatron-Bridge H100 layout (tp 2,
// pp 8, vp 4, ep 32, dp 16, micro-batch 1, FP8 current scaling, distributed
// optimizer, sequence parallel, no recompute; data/h100/published_runs.csv):
// it ran on 80 GB H100s, so every stage must fit.
TEST(MoeMemory, Qwen3_235bPublishedLayoutFits) {
  const Model model = testing::preset_model("qwen3-235b-a22b");
  Plan plan = moe_plan(2, 8, 16, 32);
  plan.virtual_stages = 4;
  plan.schedule = Schedule::kInterleaved;
  plan.global_batch_size = 8192;
  plan.precision = Precision::kFp8;
  plan.fp8_recipe = Fp8Recipe::kCurrent;
  plan.distributed_optimizer = true;
  ASSERT_EQ(plan.world_size(), 256);
  ASSERT_EQ(plan.expert_data_parallel(), 1);
  const std::vector<MemoryBreakdown> stages = memory(model, plan);
  for (size_t r = 0; r < stages.size(); ++r) {
    EXPECT_LT(stages[r].total_bytes(), 80e9) << "stage " << r;
    // Not vacuous: the experts (state unsharded at edp 1) and 1F1B's
    // in-flight activations take most of it.
    EXPECT_GT(stages[r].total_bytes(), 40e9) << "stage " << r;
    EXPECT_GT(stages[r].expert_parameters, 0.5 * stages[r].parameters) << "stage " << r;
  }
  // Without expert parallelism the same layout cannot hold its experts
  // (ep 1: all 128 experts of each layer on every rank).
  Plan no_ep = plan;
  no_ep.expert_parallel = 1;
  EXPECT_GT(peak(memory(model, no_ep)), 80e9);
}

}  // namespace
}  // namespace llmplan::simulator

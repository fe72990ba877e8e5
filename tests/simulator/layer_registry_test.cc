// A new layer kind through the registry (simulator/layers/layer_kind.h):
// a toy kind, defined and registered in this file only, contributes its
// parameters, model FLOPs, field checks, activation memory and kernels to
// validate(), the parameter count, stage memory, the lowering and
// simulate() without any other edit.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cstdint>
#include <memory>
#include <vector>

#include "simulator/layers/layer_kind.h"
#include "simulator/layers/layer_part.h"
#include "simulator/lowering.h"
#include "simulator/memory.h"
#include "simulator/model.h"
#include "simulator/model_json.h"
#include "simulator/plan.h"
#include "simulator/plan_json.h"
#include "simulator/simulate.h"
#include "tests/simulator/test_cluster.h"

namespace llmplan::simulator {
namespace {

using testing::RecordingCost;

// The toy kind 'Q': a pre-norm block with one [h -> 7] projection.
constexpr char kToy = 'Q';
constexpr int kToyWidth = 7;

// Its kernels: the projection's GEMM forward and its two gradients.
class ToyMixer : public lowering::LayerPart {
 public:
  using LayerPart::LayerPart;
  void forward(std::vector<LoweredOp>* out, OpCategory cat) override {
    gemm(out, KernelKind::kFc2Gemm, Pass::kForward, tokens(), kToyWidth, h_, 1, cat);
  }
  void backward(std::vector<LoweredOp>* out) override {
    gemm_backward(out, KernelKind::kFc2Gemm, tokens(), kToyWidth, h_, 1);
  }
};

int64_t toy_parameters(const Model& m, int) {
  return layers::norm_parameters(m) + static_cast<int64_t>(m.hidden_size) * kToyWidth;
}

double toy_activation_bytes(const Model& m, const Plan& p, int) {
  return layers::rank_tokens(m, p) * m.hidden_size * 2.0;  // its input, bf16
}

double toy_flops_per_token(const Model& m, int) { return 2.0 * m.hidden_size * kToyWidth; }

Status toy_validate(const Model& m) {
  if (m.linear_bias) return layers::bad_field("linear_bias", "must be false with toy layers");
  return Status();
}

std::unique_ptr<lowering::LayerPart> toy_part(const Model& m, const Plan& p, const Placement& pl,
                                              const CostModel& c) {
  return std::make_unique<ToyMixer>(m, p, pl, c);
}

// The one place the toy kind is registered: before main runs.
const layers::LayerKindRegistration kToyKind({.symbol = kToy,
                                              .name = "toy",
                                              .validate = toy_validate,
                                              .parameters = toy_parameters,
                                              .activation_bytes = toy_activation_bytes,
                                              .flops_per_token = toy_flops_per_token,
                                              .make_part = toy_part});

// An attention layer, a toy layer, a dense MLP layer.
Model toy_model() {
  Model m;
  const Status read = apply_model_json(boost::json::parse(R"({
    "name": "toy", "layers": 3, "hidden": 256, "heads": 4, "ffn_hidden": 512, "seq": 1024,
    "vocab": 1000, "positions": "rotary", "activation": "swiglu", "linear_bias": false,
    "layer_pattern": "*Q-"})"), "toy", &m);
  EXPECT_TRUE(read.ok()) << read.message();
  return m;
}

Plan toy_plan() {
  Plan plan;
  const Status read = apply_plan_json(
      boost::json::parse(R"({"micro_batch": 2, "global_batch": 8, "flash_attention": true})"),
      "plan", &plan);
  EXPECT_TRUE(read.ok()) << read.message();
  return plan;
}

TEST(LayerRegistry, TheRegisteredToyKindIsAdmittedAnUnregisteredOneRefused) {
  ASSERT_NE(layers::find_layer_kind(kToy), nullptr);
  EXPECT_EQ(layers::find_layer_kind('Z'), nullptr);
  Model unknown = toy_model();
  unknown.layer_pattern = "*Z-";
  EXPECT_EQ(validate(unknown).message(),
            "model.layer_pattern: character 'Z' at 1 is not M, *, - or E");
  EXPECT_TRUE(validate(toy_model()).ok()) << validate(toy_model()).message();
  Model biased = toy_model();
  biased.linear_bias = true;
  EXPECT_EQ(validate(biased).message(), "model.linear_bias: must be false with toy layers");
}

TEST(LayerRegistry, TheToyKindCountsItsParametersAndFlops) {
  const Model m = toy_model();
  const int64_t toy = 256 + 256 * 7;
  EXPECT_EQ(m.layer_parameters(1), toy);
  int64_t sum = m.embedding_parameters() + m.head_parameters();
  for (int i = 0; i < m.num_layers; ++i) sum += m.layer_parameters(i);
  EXPECT_EQ(m.parameter_count(), sum);
  // Model FLOPs: the toy's projection on every token, forward and backward.
  Model without = m;
  without.layer_pattern = "*--";
  const double toy_flops = 3.0 * 8 * 1024 * (2.0 * 256 * 7);
  const double mlp_flops = 3.0 * 8 * 1024 * (2.0 * 3 * 256 * 512);
  EXPECT_NEAR(m.model_flops_per_step(8) - without.model_flops_per_step(8), toy_flops - mlp_flops,
              1e-9 * without.model_flops_per_step(8));
}

TEST(LayerRegistry, TheToyKindHoldsItsMemory) {
  const Model m = toy_model();
  const Plan plan = toy_plan();
  ASSERT_TRUE(validate(m, plan).ok()) << validate(m, plan).message();
  EXPECT_DOUBLE_EQ(hybrid_layer_activation_bytes(m, plan, 1), 2.0 * 1024 * 256 * 2.0);
  EXPECT_DOUBLE_EQ(layer_parameters_per_device(m, plan, 1), 256.0 + 256.0 * 7);
  const std::vector<double> stage = stage_parameters_per_device(m, plan);
  double layers = 0;
  for (int i = 0; i < m.num_layers; ++i) layers += layer_parameters_per_device(m, plan, i);
  EXPECT_DOUBLE_EQ(stage[0], layers + 1000.0 * 256 + 256);  // embedding, final norm (tied head)
}

TEST(LayerRegistry, TheToyKindLowersItsKernels) {
  const Model m = toy_model();
  const Plan plan = toy_plan();
  const RecordingCost cost;
  const Cluster cluster = testing::a100_cluster();
  lower_chunk(m, plan, place(plan, cluster), cost, 0);
  // The toy's GEMMs are the only ones kToyWidth wide.
  int forward = 0, data = 0, weight = 0;
  for (const KernelDesc& k : cost.kernels()) {
    if (k.kind != KernelKind::kFc2Gemm || k.gemm.n != kToyWidth) continue;
    EXPECT_EQ(k.gemm.m, 2 * 1024);
    EXPECT_EQ(k.gemm.k, 256);
    forward += k.pass == Pass::kForward ? 1 : 0;
    data += k.pass == Pass::kBackwardData ? 1 : 0;
    weight += k.pass == Pass::kBackwardWeight ? 1 : 0;
  }
  EXPECT_GE(forward, 1);
  EXPECT_GE(data, 1);
  EXPECT_GE(weight, 1);
  const auto report = simulate(m, plan, cluster);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_GT(report->iteration_time_s, 0);
  EXPECT_DOUBLE_EQ(report->total_params, static_cast<double>(m.parameter_count()));
}

// The registry is frozen at its first read: a kind registered later, once
// simulations may be running on other threads, aborts instead of changing
// what they see.
TEST(LayerRegistryDeathTest, ARegistrationAfterTheFirstReadAborts) {
  const layers::LayerKindSpec* toy = layers::find_layer_kind(kToy);  // a read
  ASSERT_NE(toy, nullptr);
  layers::LayerKindSpec late = *toy;
  late.symbol = 'Y';
  EXPECT_DEATH(layers::register_layer_kind(late), "check failed: !frozen");
  EXPECT_EQ(layers::find_layer_kind('Y'), nullptr);
}

}  // namespace
}  // namespace llmplan::simulator

// FP8 training (Plan::precision kFp8): which GEMMs (and casts) run in FP8, the casts
// Transformer Engine adds, the FP8 peak and efficiency in the Roofline, the
// memory it saves and costs, and the error on GPUs without FP8 (semantics in
// simulator/lowering.h, simulator/memory.h, simulator/roofline.h).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "simulator/lowering.h"
#include "simulator/memory.h"
#include "simulator/plan_json.h"
#include "simulator/roofline.h"
#include "simulator/simulate.h"
#include "tests/simulator/test_cluster.h"

namespace llmplan::simulator {
namespace {

using testing::RecordingCost;
using testing::a100_cluster;
using testing::gpt;

// An H100-like test cluster: the A100 fixture with an FP8 peak.
Cluster fp8_cluster() {
  return testing::a100_cluster_with("fp8-test", 989e12, 1979e12, 3.35e12, 132);
}

// An FC1 GEMM of 12 x 11 = 132 output tiles of 128 x 128 on the 132-SM
// test GPU: exactly one wave of full tiles, compute-bound in every precision.
KernelDesc one_wave_gemm() {
  KernelDesc k;
  k.kind = KernelKind::kFc1Gemm;
  k.gemm = {12 * 128, 11 * 128, 8192, 1};
  k.flops = 2.0 * 12 * 128 * 11 * 128 * 8192;
  return k;
}

Plan fp8_plan(Fp8Recipe recipe = Fp8Recipe::kDelayed) {
  Plan p;
  p.tensor_parallel = 2;
  p.global_batch_size = 1;
  p.precision = Precision::kFp8;
  p.fp8_recipe = recipe;
  return p;
}

TEST(Fp8, LinearGemmsRunInFp8AttentionAndLogitsStayBf16) {
  const Model model = gpt(2, 1024, 16, 2048);
  const Plan plan = fp8_plan();
  const Cluster cluster = fp8_cluster();
  RecordingCost cost;
  const ChunkProgram prog = lower_chunk(model, plan, place(plan, cluster), cost, 0);
  const int fp8_gemms = testing::expect_linear_gemms_in(Precision::kFp8, cost.kernels());
  // 4 linear GEMMs x (forward, data gradient, weight gradient) x 2 layers.
  EXPECT_EQ(fp8_gemms, 4 * 3 * 2);
}

TEST(Fp8, FourCastsEachWayPerLayerWithTheirBytes) {
  // b = 1, s = 2048, h = 1024, a = 16 (d = 64), f = 4h, t = 2, no SP.
  const Model model = gpt(1, 1024, 16, 2048);
  const double T = 2048, h = 1024, t = 2, f = 4096, qkv = 3 * 1024 / t;
  for (Fp8Recipe recipe : {Fp8Recipe::kDelayed, Fp8Recipe::kCurrent}) {
    const Plan plan = fp8_plan(recipe);
    const auto [fwd, bwd] = testing::cast_bytes_by_pass(model, plan, fp8_cluster());
    const double per = recipe == Fp8Recipe::kDelayed ? 4.0 : 6.0;
    // Forward: QKV input (T h), output-projection input (T a d / t), FC1
    // input (T h), FC2 input (T f / t).
    EXPECT_EQ(fwd, (std::vector<double>{T * h * per, T * h / t * per, T * h * per,
                                        T * f / t * per}));
    // Backward: output gradients of FC2 (T h), FC1 (T f / t), the output
    // projection (T h) and QKV (T 3h / t), in backward order.
    EXPECT_EQ(bwd, (std::vector<double>{T * h * per, T * f / t * per, T * h * per, T * qkv * per}));
  }
  EXPECT_DOUBLE_EQ(fp8_cast_bytes_per_element(Fp8Recipe::kMxfp8), 4.0 + 2.0 / 32.0);
}

// Blackwell (a GPU with FP4 tensor cores) reads either FP8 layout from one
// copy: its tensor-scaling casts write no transpose, one byte per element
// less (3 delayed, 5 current); MXFP8 keeps its two copies.
TEST(Fp8, BlackwellCastsWriteNoTransposedCopy) {
  Cluster blackwell = fp8_cluster();
  EXPECT_TRUE(Roofline(blackwell).fp8_transpose_copy());
  blackwell.gpu.peak_fp4_flops = 2 * blackwell.gpu.peak_fp8_flops;
  EXPECT_FALSE(Roofline(blackwell).fp8_transpose_copy());
  EXPECT_DOUBLE_EQ(fp8_cast_bytes_per_element(Fp8Recipe::kDelayed, false), 3.0);
  EXPECT_DOUBLE_EQ(fp8_cast_bytes_per_element(Fp8Recipe::kCurrent, false), 5.0);
  EXPECT_DOUBLE_EQ(fp8_cast_bytes_per_element(Fp8Recipe::kMxfp8, false), 4.0 + 2.0 / 32.0);
  // The lowering asks the cost model: the same chunk's casts, 5 / 6 of the bytes.
  const Model model = gpt(1, 1024, 16, 2048);
  const Plan plan = fp8_plan(Fp8Recipe::kCurrent);
  auto cast_bytes = [&](bool fp8_transpose) {
    RecordingCost cost(fp8_transpose);
    lower_chunk(model, plan, place(plan, fp8_cluster()), cost, 0);
    double bytes = 0;
    for (const KernelDesc& k : cost.kernels()) {
      if (k.kind == KernelKind::kFp8CastTranspose) bytes += k.bytes;
    }
    return bytes;
  };
  ASSERT_GT(cast_bytes(true), 0);
  EXPECT_DOUBLE_EQ(cast_bytes(false) / cast_bytes(true), 5.0 / 6.0);
}

TEST(Fp8, RooflineRunsFp8GemmsAtTheFp8PeakAndEfficiency) {
  Cluster c = fp8_cluster();
  c.gpu.roofline.gemm_efficiency = 0.8;
  c.gpu.roofline.fp8_gemm_efficiency = 0.7;
  c.gpu.roofline.gemm_dim_half = 0;
  const Roofline roofline(c);
  KernelDesc k = one_wave_gemm();
  k.precision = Precision::kBf16;
  const double bf16 = roofline.kernel_time_s(k);
  EXPECT_NEAR(bf16, k.flops / (989e12 * 0.8), 1e-12);
  k.precision = Precision::kFp8;
  const double fp8 = roofline.kernel_time_s(k);
  EXPECT_NEAR(fp8, k.flops / (1979e12 * 0.7), 1e-12);
  // FP8 operands are 1 byte, the output 2.
  EXPECT_DOUBLE_EQ(Roofline::gemm_bytes({10, 20, 30, 1}, Precision::kFp8),
                   1.0 * (10 * 30 + 30 * 20) + 2.0 * 10 * 20);
}

// MXFP8 (block-scaled) GEMM kernels run at kMxfp8GemmRateRatio (6.812 /
// 7.161, Transformer Engine's pre-quantized GEMM benchmark) of the
// per-tensor scaled rate; memory-bound thin GEMMs and bf16 GEMMs are not
// affected.
TEST(Fp8, RooflineRunsMxfp8GemmsAtTheBlockScaledRate) {
  Cluster c = fp8_cluster();
  c.gpu.roofline.fp8_gemm_efficiency = 0.7;
  c.gpu.roofline.gemm_dim_half = 0;
  const Roofline roofline(c);
  KernelDesc k = one_wave_gemm();
  k.precision = Precision::kFp8;
  const double tensor_scaled = roofline.kernel_time_s(k);
  k.fp8_block_scaled = true;
  const double block_scaled = roofline.kernel_time_s(k);
  EXPECT_NEAR(block_scaled, k.flops / (1979e12 * 0.7 * 6.812 / 7.161), 1e-12);
  EXPECT_NEAR(block_scaled / tensor_scaled, 7.161 / 6.812, 1e-12);
  // The flag means nothing on a bf16 GEMM.
  k.precision = Precision::kBf16;
  const double bf16 = roofline.kernel_time_s(k);
  k.fp8_block_scaled = false;
  EXPECT_DOUBLE_EQ(roofline.kernel_time_s(k), bf16);
}

// The lowering marks the FP8 GEMMs of an MXFP8 plan block-scaled, and only
// those: tensor-scaling recipes and the bf16 GEMMs (attention, logits) are
// not.
TEST(Fp8, Mxfp8PlansMarkTheirFp8GemmsBlockScaled) {
  const Model model = gpt(2, 1024, 16, 2048);
  for (Fp8Recipe recipe : {Fp8Recipe::kDelayed, Fp8Recipe::kCurrent, Fp8Recipe::kMxfp8}) {
    const Plan plan = fp8_plan(recipe);
    RecordingCost cost;
    lower_chunk(model, plan, place(plan, fp8_cluster()), cost, 0);
    int block_scaled = 0;
    for (const KernelDesc& k : cost.kernels()) {
      if (k.fp8_block_scaled) {
        ++block_scaled;
        EXPECT_TRUE(is_gemm(k.kind)) << kernel_kind_name(k.kind);
        EXPECT_EQ(k.precision, Precision::kFp8) << kernel_kind_name(k.kind);
      }
    }
    // 4 linear GEMMs x 3 passes x 2 layers with MXFP8, none otherwise.
    EXPECT_EQ(block_scaled, recipe == Fp8Recipe::kMxfp8 ? 4 * 3 * 2 : 0);
  }
}

TEST(Fp8, FasterThanBf16OnAnFp8Gpu) {
  const Model model = gpt(8, 4096, 32, 4096);
  Plan plan = testing::layout_plan(/*tensor=*/8, 1, 1, /*global_batch=*/8);
  plan.sequence_parallel = true;
  const std::vector<StepReport> steps =
      testing::step_in_each(model, plan, fp8_cluster(), {Precision::kBf16, Precision::kFp8});
  const StepReport &bf16 = steps[0], &fp8 = steps[1];
  EXPECT_LT(fp8.iteration_time_s, bf16.iteration_time_s);
  EXPECT_GT(fp8.breakdown.fp8_cast_s, 0.0);
  EXPECT_EQ(bf16.breakdown.fp8_cast_s, 0.0);
  // The model FLOPs are the same; MFU is against the bf16 peak for both.
  EXPECT_DOUBLE_EQ(fp8.model_flops, bf16.model_flops);
  EXPECT_NEAR(fp8.mfu / bf16.mfu, bf16.iteration_time_s / fp8.iteration_time_s, 1e-9);
}

TEST(Fp8, GpuWithoutFp8IsAOneLineError) {
  Plan plan = fp8_plan();
  const Result<StepReport> r = simulate(gpt(2, 1024, 16, 2048), plan, a100_cluster());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("a100-test has no FP8 tensor cores"), std::string::npos)
      << r.status().message();
  EXPECT_EQ(r.status().message().find('\n'), std::string::npos);
  // MXFP8 needs block scaling (Blackwell).
  plan.fp8_recipe = Fp8Recipe::kMxfp8;
  const Result<StepReport> mx = simulate(gpt(2, 1024, 16, 2048), plan, fp8_cluster());
  ASSERT_FALSE(mx.ok());
  EXPECT_NE(mx.status().message().find("mxfp8"), std::string::npos);
  Cluster blackwell = fp8_cluster();
  blackwell.gpu.fp8_block_scaling = true;
  EXPECT_TRUE(simulate(gpt(2, 1024, 16, 2048), plan, blackwell).ok());
}

TEST(Fp8, ActivationsKeepFp8CopiesOfTheGemmInputs) {
  // Per token and hidden unit, GeLU, no SP, t = 1, dropout on: bf16 keeps
  // 10 (replicated) + 2 + 4 + 2 + 16 (Q, K+V, attention output = out-proj
  // input, MLP 2f+2f with f = 4h) = 34 bytes x h; fp8 keeps the QKV, FC1 and
  // FC2 inputs in 1 byte, and the out-proj's fp8 copy of the attention
  // output beside the bf16 one flash attention saves: 34 - 1 - 1 + 1 - 4 =
  // 29. Both + flash attention's fp32 log-sum-exp, 4 x 16 heads per token.
  const double lse = 4.0 * 16 / 1024;
  const Model model = gpt(1, 1024, 16, 2048);
  Plan plan;
  const double bf16 = layer_activation_bytes(model, plan);
  plan.precision = Precision::kFp8;
  const double fp8 = layer_activation_bytes(model, plan);
  EXPECT_DOUBLE_EQ(bf16, 2048.0 * 1024 * (34 + lse));
  EXPECT_DOUBLE_EQ(fp8, 2048.0 * 1024 * (29 + lse));
}

TEST(Fp8, CachedFp8WeightsCostTwoBytesPerLayerParameter) {
  const Model model = gpt(4, 1024, 16, 2048);
  const std::vector<double> params = {static_cast<double>(model.parameter_count())};
  // Weights and optimizer state of the one stage holding every parameter.
  auto weight_bytes = [&](const Plan& p) {
    return stage_memory(model, p, params, 0)[0].weights_and_optimizer_bytes;
  };
  Plan bf16_plan;
  bf16_plan.global_batch_size = 1;
  Plan plan = bf16_plan;
  plan.precision = Precision::kFp8;
  EXPECT_DOUBLE_EQ(weight_bytes(plan) - weight_bytes(bf16_plan),
                   2.0 * 4 * static_cast<double>(model.layer_parameters()));
  // At ZeRO-3 bf16 parameters are cast per layer after the gather: no
  // cached copy. Megatron-FSDP's FP8 parameters (fp8_param_gather) hold the
  // layer weights' shard in fp8: 1 byte a layer parameter less, / 2 ranks.
  plan.zero_stage = 3;
  plan.data_parallel = 2;
  plan.global_batch_size = 2;
  plan.fp8_param_gather = false;
  Plan bf16_z3 = plan;
  bf16_z3.precision = Precision::kBf16;
  EXPECT_DOUBLE_EQ(weight_bytes(plan),
                   weight_bytes(bf16_z3));
  plan.fp8_param_gather = true;
  EXPECT_DOUBLE_EQ(weight_bytes(bf16_z3) -
                       weight_bytes(plan),
                   4 * static_cast<double>(model.layer_parameters()) / 2);
  // With the distributed optimizer (ZeRO-1) NVIDIA's FP8 recipes keep the
  // weights in fp8 (fp8_param_gather): 1-byte data + 1-byte transpose in
  // place of the 2-byte bf16 weight, the same state as bf16. FSDP's
  // SHARD_GRAD_OP (ZeRO-2) keeps bf16 weights and TE caches their fp8 copies.
  plan.zero_stage = 1;
  bf16_z3.zero_stage = 1;
  EXPECT_DOUBLE_EQ(weight_bytes(plan),
                   weight_bytes(bf16_z3));
  plan.zero_stage = 2;
  bf16_z3.zero_stage = 2;
  EXPECT_DOUBLE_EQ(weight_bytes(plan) -
                       weight_bytes(bf16_z3),
                   2.0 * 4 * static_cast<double>(model.layer_parameters()));
}

// Records the bytes of every all-gather; kernels cost 1 us, collectives 0.
class GatherRecordingCost final : public CostModel {
 public:
  double kernel_time_s(const KernelDesc&) const override { return 1e-6; }
  double collective_time_s(const CollectiveDesc& c) const override {
    std::lock_guard<std::mutex> lock(mu_);
    if (c.kind == CollectiveKind::kAllGather) gathered_bytes_ += c.bytes;
    return 0.0;
  }
  double microbatch_overhead_s() const override { return 0.0; }
  double iteration_overhead_s() const override { return 0.0; }
  std::string describe() const override { return "gather-recording"; }
  double gathered_bytes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return gathered_bytes_;
  }

 private:
  mutable std::mutex mu_;
  mutable double gathered_bytes_ = 0;
};

// The distributed optimizer's parameter all-gather (#26): with FP8 tensor
// scaling (delayed or current) the layer weights are fp8 parameters
// (fp8_param_gather, what the memory model assumes at ZeRO-1) and travel at
// 1 byte each, the embedding and output layer at 2; MXFP8 (fp8_param_gather
// False in NVIDIA's recipes) and bf16 gather 2 bytes per parameter. TP 1, so
// the only all-gather is the parameters'.
TEST(Fp8, DistributedOptimizerGathersFp8LayerWeightsAtOneByte) {
  const Model model = gpt(4, 1024, 16, 2048);
  const double all = static_cast<double>(model.parameter_count());
  const double layers = 4.0 * static_cast<double>(model.layer_parameters());
  auto gathered = [&](Precision precision, Fp8Recipe recipe, bool fp8_param_gather = true) {
    Plan plan = testing::layout_plan(1, 1, 2, 2);
    plan.fp8_param_gather = fp8_param_gather;
    plan.zero_stage = 1;
    plan.distributed_optimizer = true;
    plan.precision = precision;
    plan.fp8_recipe = recipe;
    auto cost = std::make_shared<GatherRecordingCost>();
    SimOptions options;
    options.cost_model = cost;
    Cluster cluster = fp8_cluster();
    cluster.gpu.fp8_block_scaling = true;  // MXFP8 needs Blackwell's block scaling
    Result<StepReport> r = simulate(model, plan, cluster, options);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return cost->gathered_bytes();
  };
  EXPECT_DOUBLE_EQ(gathered(Precision::kBf16, Fp8Recipe::kDelayed), 2.0 * all);
  EXPECT_DOUBLE_EQ(gathered(Precision::kFp8, Fp8Recipe::kMxfp8), 2.0 * all);
  EXPECT_DOUBLE_EQ(gathered(Precision::kFp8, Fp8Recipe::kCurrent), 2.0 * all - layers);
  EXPECT_DOUBLE_EQ(gathered(Precision::kFp8, Fp8Recipe::kDelayed), 2.0 * all - layers);
  // Without fp8_param_gather (NeMo-Framework-Launcher 24.07) the bf16
  // parameters travel at 2 bytes.
  EXPECT_DOUBLE_EQ(gathered(Precision::kFp8, Fp8Recipe::kCurrent, false), 2.0 * all);
  EXPECT_DOUBLE_EQ(gathered(Precision::kFp8, Fp8Recipe::kDelayed, false), 2.0 * all);
}

TEST(Fp8, PlanJsonRoundTripsFp8ParamGather) {
  Plan p = fp8_plan(Fp8Recipe::kCurrent);
  EXPECT_FALSE(plan_to_json(p).as_object().contains("fp8_param_gather"));
  p.fp8_param_gather = false;
  const boost::json::value v = plan_to_json(p);
  EXPECT_FALSE(v.at("fp8_param_gather").as_bool());
  Plan q;
  ASSERT_TRUE(apply_plan_json(v, "plan", &q).ok());
  EXPECT_EQ(q, p);
}

TEST(Fp8, PlanJsonRoundTripsPrecisionAndRecipe) {
  Plan p = fp8_plan(Fp8Recipe::kCurrent);
  const boost::json::value v = plan_to_json(p);
  EXPECT_EQ(v.at("precision").as_string(), "fp8");
  EXPECT_EQ(v.at("fp8_recipe").as_string(), "current");
  Plan q;
  ASSERT_TRUE(apply_plan_json(v, "plan", &q).ok());
  EXPECT_EQ(q, p);
  // A bf16 plan writes no recipe.
  EXPECT_FALSE(plan_to_json(Plan{}).as_object().contains("fp8_recipe"));
  const Status bad = apply_plan_json(boost::json::parse(R"({"fp8_recipe": "fast"})"), "x.json", &q);
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("fp8_recipe"), std::string::npos) << bad.message();
}

}  // namespace
}  // namespace llmplan::simulator

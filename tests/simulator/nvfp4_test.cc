// NVFP4 training (Plan::precision kNvfp4, Transformer Engine's NVFP4BlockScaling
// recipe): which GEMMs and casts run in NVFP4, the cast bytes, the FP4 peak
// and efficiency in the Roofline, the memory of the FP4 copies, the error on
// GPUs without FP4, the plan JSON and the caveats (semantics in
// simulator/simulator/precision.h, simulator/memory.h, simulator/caveats.h).
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "simulator/caveats.h"
#include "simulator/cluster_json.h"
#include "simulator/lowering.h"
#include "simulator/memory.h"
#include "simulator/plan_json.h"
#include "simulator/roofline.h"
#include "simulator/simulate.h"
#include "tests/simulator/test_cluster.h"

namespace llmplan::simulator {
namespace {

using testing::RecordingCost;
using testing::gpt;

// A B200-like test cluster (the b200 preset's figures: 2.25 PF BF16, 4.5 PF
// FP8, 7.7 TB/s, 148 SMs) with the datasheet's 9 PF dense FP4, built here so
// that the test does not depend on the shipped presets.
Cluster fp4_cluster() {
  Cluster c = testing::a100_cluster_with("fp4-test", 2250e12, 4500e12, 7.7e12, 148);
  c.gpu.peak_fp4_flops = 9000e12;
  c.gpu.fp8_block_scaling = true;
  c.gpu.hbm_bytes = 180e9;
  c.gpu.nvlink_bytes_per_s = 1.8e12;
  return c;
}

Plan nvfp4_plan() {
  Plan p;
  p.tensor_parallel = 2;
  p.global_batch_size = 1;
  p.precision = Precision::kNvfp4;
  return p;
}

TEST(Nvfp4, LinearGemmsRunInNvfp4AttentionAndLogitsStayBf16) {
  const Model model = gpt(2, 1024, 16, 2048);
  const Plan plan = nvfp4_plan();
  RecordingCost cost;
  lower_chunk(model, plan, place(plan, fp4_cluster()), cost, 0);
  const int fp4_gemms = testing::expect_linear_gemms_in(Precision::kNvfp4, cost.kernels());
  // 4 linear GEMMs x (forward, data gradient, weight gradient) x 2 layers:
  // the recipe runs all three in NVFP4.
  EXPECT_EQ(fp4_gemms, 4 * 3 * 2);
}

TEST(Nvfp4, CastsAreCountedWithTheirBytes) {
  // b = 1, s = 2048, h = 1024, a = 16 (d = 64), f = 4h, t = 2, no SP.
  const Model model = gpt(1, 1024, 16, 2048);
  const double T = 2048, h = 1024, t = 2, f = 4096, qkv = 3 * 1024 / t;
  const Plan plan = nvfp4_plan();
  const auto [fwd, bwd] = testing::cast_bytes_by_pass(model, plan, fp4_cluster());
  // Read for the amax (2), read again (2), written as rowwise and columnwise
  // NVFP4 copies, each half a byte plus an E4M3 scale per 16 elements.
  const double per = 2.0 + 2.0 + 2.0 * (0.5 + 1.0 / 16.0);
  EXPECT_DOUBLE_EQ(kNvfp4CastBytesPerElement, per);
  EXPECT_DOUBLE_EQ(cast_bytes_per_element(plan), per);
  // The same four casts each way as FP8, at the same places.
  EXPECT_EQ(fwd, (std::vector<double>{T * h * per, T * h / t * per, T * h * per, T * f / t * per}));
  EXPECT_EQ(bwd, (std::vector<double>{T * h * per, T * f / t * per, T * h * per, T * qkv * per}));
}

TEST(Nvfp4, RooflineRunsFp4GemmsAtTheFp4PeakAndEfficiency) {
  Cluster c = fp4_cluster();
  c.gpu.roofline.gemm_efficiency = 0.8;
  c.gpu.roofline.fp8_gemm_efficiency = 0.7;
  c.gpu.roofline.fp4_gemm_efficiency = 0.55;
  c.gpu.roofline.gemm_dim_half = 0;
  const Roofline roofline(c);
  // 4 x 37 = 148 output tiles of 128 x 128: one wave of full tiles.
  KernelDesc k;
  k.kind = KernelKind::kFc1Gemm;
  k.gemm = {4 * 128, 37 * 128, 16384, 1};
  k.flops = 2.0 * 4 * 128 * 37 * 128 * 16384;
  k.precision = Precision::kNvfp4;
  EXPECT_NEAR(roofline.kernel_time_s(k), k.flops / (9000e12 * 0.55), 1e-12);
  EXPECT_DOUBLE_EQ(roofline.gemm_efficiency(k.gemm, Precision::kNvfp4), 0.55);
  // Operands of 0.5625 bytes (FP4 + scales), the output 2.
  EXPECT_DOUBLE_EQ(Roofline::gemm_bytes({10, 20, 32, 1}, Precision::kNvfp4),
                   0.5625 * (10 * 32 + 32 * 20) + 2.0 * 10 * 20);
  // MFU is reported against the BF16 peak, the precision's own against FP4.
  EXPECT_DOUBLE_EQ(mfu_reference_peak_flops(c.gpu, Precision::kNvfp4), 2250e12);
  EXPECT_DOUBLE_EQ(peak_flops(c.gpu, Precision::kNvfp4), 9000e12);
  EXPECT_DOUBLE_EQ(mfu_of_precision_peak(0.4, c.gpu, Precision::kNvfp4), 0.1);
}

TEST(Nvfp4, StepFasterThanFp8FasterThanBf16OnALargeGemmBoundModel) {
  // 8 layers of h = 8192, s = 4096 on 8 GPUs with TP 8 and SP: the linear
  // GEMMs dominate the step.
  const Model model = gpt(8, 8192, 64, 4096);
  Plan plan = testing::layout_plan(/*tensor=*/8, 1, 1, /*global_batch=*/8);
  plan.sequence_parallel = true;
  plan.micro_batch_size = 2;
  const std::vector<StepReport> steps = testing::step_in_each(
      model, plan, fp4_cluster(), {Precision::kBf16, Precision::kFp8, Precision::kNvfp4});
  const StepReport &bf16 = steps[0], &fp8 = steps[1], &fp4 = steps[2];
  // Each doubling of the GEMM peak (at the default efficiencies, 0.6 of the
  // FP8 peak and 0.5 of the FP4 one) saves at least 10 % of the step here
  // (17 % and 15 % when written); not 50 %: attention, norms, casts and
  // communication stay.
  EXPECT_LT(fp8.iteration_time_s, 0.9 * bf16.iteration_time_s);
  EXPECT_LT(fp4.iteration_time_s, 0.9 * fp8.iteration_time_s);
  EXPECT_GT(fp4.breakdown.fp8_cast_s, 0.0);
  // NVFP4 casts move more bytes than delayed-scaling FP8's (5.125 vs 3 per
  // element: a GPU with FP4 tensor cores writes no transposed FP8 copy,
  // CostModel::fp8_transpose_copy) at the same places.
  EXPECT_NEAR(fp4.breakdown.fp8_cast_s / fp8.breakdown.fp8_cast_s, 5.125 / 3.0, 0.05);
  EXPECT_DOUBLE_EQ(fp4.model_flops, bf16.model_flops);
  EXPECT_NEAR(fp4.mfu / bf16.mfu, bf16.iteration_time_s / fp4.iteration_time_s, 1e-9);
}

TEST(Nvfp4, ActivationsKeepColumnwiseFp4CopiesOfTheGemmInputs) {
  // As Fp8.ActivationsKeepFp8CopiesOfTheGemmInputs with g bytes per GEMM
  // input: 22 + 7 g per token and hidden unit (GeLU, f = 4h, t = 1, dropout
  // on); bf16 34, fp8 29, nvfp4 g = 0.5625: 25.9375.
  const double lse = 4.0 * 16 / 1024;
  const Model model = gpt(1, 1024, 16, 2048);
  Plan plan;
  plan.precision = Precision::kNvfp4;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(model, plan), 2048.0 * 1024 * (22 + 7 * 0.5625 + lse));
}

TEST(Nvfp4, CachedFp4WeightsAndLessMemoryThanFp8) {
  const Model model = gpt(4, 4096, 32, 4096);
  const double layer_params = 4.0 * static_cast<double>(model.layer_parameters());
  Plan plan;
  plan.global_batch_size = 1;
  const std::vector<double> params = {static_cast<double>(model.parameter_count())};
  const MemoryBreakdown bf16 = stage_memory(model, plan, params, 0)[0];
  plan.precision = Precision::kFp8;
  const MemoryBreakdown fp8 = stage_memory(model, plan, params, 0)[0];
  plan.precision = Precision::kNvfp4;
  const MemoryBreakdown fp4 = stage_memory(model, plan, params, 0)[0];
  // Rowwise + columnwise NVFP4 copies beside the bf16 weights.
  EXPECT_DOUBLE_EQ(fp4.weights_and_optimizer_bytes - bf16.weights_and_optimizer_bytes,
                   2.0 * 0.5625 * layer_params);
  EXPECT_LT(fp4.activation_bytes, fp8.activation_bytes);
  EXPECT_LT(fp4.total_bytes(), fp8.total_bytes());
  // With the distributed optimizer FP8 keeps fp8 weights (fp8_param_gather)
  // while NVFP4 keeps bf16 weights and caches both copies: +1.125 B each.
  plan.zero_stage = 1;
  plan.data_parallel = 2;
  plan.global_batch_size = 2;
  Plan bf16_z1 = plan;
  bf16_z1.precision = Precision::kBf16;
  EXPECT_DOUBLE_EQ(stage_memory(model, plan, params, 0)[0].weights_and_optimizer_bytes -
                       stage_memory(model, bf16_z1, params, 0)[0].weights_and_optimizer_bytes,
                   2.0 * 0.5625 * layer_params);
  // ZeRO-3: cast per layer after the gather, no cached copy.
  plan.zero_stage = bf16_z1.zero_stage = 3;
  EXPECT_DOUBLE_EQ(stage_memory(model, plan, params, 0)[0].weights_and_optimizer_bytes,
                   stage_memory(model, bf16_z1, params, 0)[0].weights_and_optimizer_bytes);
}

TEST(Nvfp4, GpuWithoutFp4IsAOneLineErrorNamingPlanPrecision) {
  Cluster h100_like = fp4_cluster();
  h100_like.gpu.name = "no-fp4-test";
  h100_like.gpu.peak_fp4_flops = 0;
  const Result<StepReport> r = simulate(gpt(2, 1024, 16, 2048), nvfp4_plan(), h100_like);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind("plan.precision nvfp4: GPU no-fp4-test has no FP4", 0), 0u)
      << r.status().message();
  EXPECT_EQ(r.status().message().find('\n'), std::string::npos);
  EXPECT_TRUE(check_precision(nvfp4_plan(), fp4_cluster().gpu).ok());
}

TEST(Nvfp4, PlanJsonRoundTrips) {
  const Plan p = nvfp4_plan();
  const boost::json::value v = plan_to_json(p);
  EXPECT_EQ(v.at("precision").as_string(), "nvfp4");
  EXPECT_FALSE(v.as_object().contains("fp8_recipe"));
  Plan q;
  ASSERT_TRUE(apply_plan_json(v, "plan", &q).ok());
  EXPECT_EQ(q, p);
  EXPECT_STREQ(to_string(Precision::kNvfp4), "nvfp4");
  const Status bad = apply_plan_json(boost::json::parse(R"({"precision": "fp4"})"), "x.json", &q);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("nvfp4"), std::string::npos) << bad.message();
}

TEST(Nvfp4, FlaggedUntilTheGpuHasNvfp4Runs) {
  GpuSpec g = fp4_cluster().gpu;
  g.validation.calibrated = true;
  g.validation.min_mfu = 0.2;
  g.validation.max_mfu = 0.6;
  g.validation.flash_attention = true;
  Plan plan = nvfp4_plan();
  // No NVFP4 rows: flagged, whatever the MFU; a bf16 plan is not.
  EXPECT_EQ(roofline_caveats(plan, g, 0.3) & kCaveatNvfp4Unvalidated, kCaveatNvfp4Unvalidated);
  EXPECT_EQ(roofline_caveats(Plan{}, g, 0.3) & kCaveatNvfp4Unvalidated, 0u);
  const std::vector<Caveat> list = caveat_list(kCaveatNvfp4Unvalidated, g, 0.3, plan.precision);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].code, "nvfp4-unvalidated");
  EXPECT_NE(list[0].text.find("no NVFP4 runs"), std::string::npos) << list[0].text;
  // With NVFP4 rows (highest 30 % of the FP4 peak) a plan is held to them:
  // 0.8 of the BF16 peak is 0.2 of the FP4 peak (fine), 1.6 would be 0.4.
  g.validation.max_mfu_fp4 = 0.3;
  EXPECT_EQ(roofline_caveats(plan, g, 0.8), 0u);
  EXPECT_EQ(roofline_caveats(plan, g, 1.6), static_cast<uint32_t>(kCaveatMfuAboveValidated));
  EXPECT_DOUBLE_EQ(validated_max_mfu(g, Precision::kNvfp4), 0.3);
  // max_mfu_fp4 is read, written and validated with the GPU.
  const boost::json::value v = gpu_to_json(g);
  EXPECT_DOUBLE_EQ(v.at("validation").at("max_mfu_fp4").as_double(), 0.3);
  g.validation.max_mfu_fp4 = 1.5;
  const Status bad = validate(g.validation);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("max_mfu_fp4"), std::string::npos) << bad.message();
}

TEST(Nvfp4, Bf16LayersAtTheEndsRunInBf16WithoutCastsOrCopies) {
  // 4 layers, the first and the last kept in bf16 (Megatron-Core's
  // first_last_layers_bf16 with 1 and 1).
  const Model model = gpt(4, 1024, 16, 2048);
  Plan plan = nvfp4_plan();
  plan.bf16_layers_at_start = 1;
  plan.bf16_layers_at_end = 1;
  EXPECT_FALSE(plan.low_precision_layer(0, 4));
  EXPECT_TRUE(plan.low_precision_layer(1, 4));
  EXPECT_TRUE(plan.low_precision_layer(2, 4));
  EXPECT_FALSE(plan.low_precision_layer(3, 4));
  RecordingCost cost;
  const ChunkProgram prog = lower_chunk(model, plan, place(plan, fp4_cluster()), cost, 0);
  int fp4_gemms = 0, bf16_linear_gemms = 0, casts = 0;
  for (const KernelDesc& k : cost.kernels()) {
    const bool linear = k.kind == KernelKind::kQkvGemm || k.kind == KernelKind::kOutProjGemm ||
                        k.kind == KernelKind::kFc1Gemm || k.kind == KernelKind::kFc2Gemm;
    if (linear) ++(k.precision == Precision::kNvfp4 ? fp4_gemms : bf16_linear_gemms);
    if (k.kind == KernelKind::kFp8CastTranspose) ++casts;
  }
  EXPECT_EQ(fp4_gemms, 4 * 3 * 2);          // layers 1 and 2
  EXPECT_EQ(bf16_linear_gemms, 4 * 3 * 2);  // layers 0 and 3
  EXPECT_EQ(casts, 8 * 2);                  // 4 each way, in layers 1 and 2 only
  // Only the NVFP4 layers' weights are cast after the optimizer.
  EXPECT_DOUBLE_EQ(prog.layer_parameters, 2.0 * model.layer_parameters() / 2);

  // Memory: copies of 2 of the 4 layers; activations between bf16's and
  // NVFP4's.
  Plan one = plan;
  one.tensor_parallel = 1;
  const std::vector<double> params = {static_cast<double>(model.parameter_count())};
  Plan bf16 = one, fp4 = one;
  bf16.precision = Precision::kBf16;
  fp4.bf16_layers_at_start = fp4.bf16_layers_at_end = 0;
  const MemoryBreakdown m = stage_memory(model, one, params, 0)[0];
  const MemoryBreakdown m16 = stage_memory(model, bf16, params, 0)[0];
  const MemoryBreakdown m4 = stage_memory(model, fp4, params, 0)[0];
  EXPECT_DOUBLE_EQ(m.weights_and_optimizer_bytes - m16.weights_and_optimizer_bytes,
                   2.0 * 0.5625 * 2 * static_cast<double>(model.layer_parameters()));
  EXPECT_DOUBLE_EQ(m.activation_bytes, (m16.activation_bytes + m4.activation_bytes) / 2);

  // The step lies between the all-NVFP4 and the bf16 one.
  Plan big;
  big.tensor_parallel = 8;
  big.sequence_parallel = true;
  big.global_batch_size = 8;
  big.precision = Precision::kNvfp4;
  const Model m8 = gpt(8, 8192, 64, 4096);
  const Result<StepReport> all = simulate(m8, big, fp4_cluster());
  big.bf16_layers_at_end = 4;
  const Result<StepReport> half = simulate(m8, big, fp4_cluster());
  big.precision = Precision::kBf16;
  big.bf16_layers_at_end = 0;
  const Result<StepReport> none = simulate(m8, big, fp4_cluster());
  ASSERT_TRUE(all.ok() && half.ok() && none.ok());
  EXPECT_GT(half->iteration_time_s, 1.02 * all->iteration_time_s);
  EXPECT_LT(half->iteration_time_s, 0.98 * none->iteration_time_s);
}

TEST(Nvfp4, Bf16LayersSplitPipelineStagesByPrecision) {
  // 8 layers on 4 stages, the last 3 in bf16: stage 1 (layers 2-3) is all
  // NVFP4, stage 2 (4-5) half bf16, stage 3 (6-7) bf16; middle stages with
  // the same layer count are not one program.
  const Model model = gpt(8, 4096, 32, 2048);
  Plan plan;
  plan.pipeline_parallel = 4;
  plan.global_batch_size = 8;
  plan.precision = Precision::kNvfp4;
  plan.bf16_layers_at_end = 3;
  const Result<StepReport> r = simulate(model, plan, fp4_cluster());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->stages.size(), 4u);
  EXPECT_GT(r->stages[2].time.compute_s, 1.05 * r->stages[1].time.compute_s);
  // Too many bf16 layers: one line naming the field.
  plan.bf16_layers_at_start = 6;
  const Status bad = validate(model, plan);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message().rfind("plan.bf16_layers_at_start", 0), 0u) << bad.message();
  // JSON: written when set, read back.
  plan.bf16_layers_at_start = 1;
  const boost::json::value v = plan_to_json(plan);
  EXPECT_EQ(v.at("bf16_layers_at_end").as_int64(), 3);
  Plan q;
  ASSERT_TRUE(apply_plan_json(v, "plan", &q).ok());
  EXPECT_EQ(q, plan);
  EXPECT_FALSE(plan_to_json(nvfp4_plan()).as_object().contains("bf16_layers_at_end"));
}

}  // namespace
}  // namespace llmplan::simulator

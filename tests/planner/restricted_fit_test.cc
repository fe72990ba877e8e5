// The restricted dense fit (#26, planner/accuracy/restricted_fit.h): the
// free-set rule (rows per free constant), the prior from the reference GPU
// scaled by datasheet ratios, the bounds at the cited ceilings, and that the
// fit recovers known constants from rows simulated with them.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "planner/accuracy/accuracy.h"
#include "planner/accuracy/restricted_fit.h"
#include "planner/accuracy/runs_file.h"
#include "presets/catalog.h"
#include "tests/planner/runs_file_rows.h"

namespace llmplan::planner {
namespace {

const char* const kHeader = runs_file_rows::kBlackwellHeader;

const std::string kModels =
    std::string(runs_file_rows::kBlackwellModelsHeader) + runs_file_rows::kBlackwellLlama3_8bModel;

// A DGX-B200 Llama 3 8B row (seq 8192) of the Blackwell form.
std::string row(const std::string& precision, int tp, int dp, int mbs, int gbs,
                const std::string& system = "DGX-B200") {
  return "\"https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/x/docs/p.md\",NeMo 26.02," +
         system + "," + std::to_string(tp * dp) + ",LLAMA3_8B,8192," + precision + "," +
         std::to_string(tp) + ",1,1,n/a,n/a,," + std::to_string(dp) + "," +
         std::to_string(mbs) + "," + std::to_string(gbs) + ",30000,1000,\n";
}

std::vector<AccuracyCase> cases_of(const std::string& rows) {
  Result<presets::Catalog> catalog = presets::Catalog::builtin();
  EXPECT_TRUE(catalog.ok());
  Result<std::vector<PublishedRun>> runs =
      read_runs_csv_text(std::string(kHeader) + rows, "bw.csv", kModels, "models.csv", *catalog);
  EXPECT_TRUE(runs.ok()) << runs.status().message();
  return make_runs_cases(*runs);
}

// Six FP8 rows of distinct layouts and batches.
std::string six_fp8_rows(const std::string& system = "DGX-B200") {
  return row("FP8-CS", 1, 8, 1, 128, system) + row("FP8-CS", 1, 8, 2, 128, system) +
         row("FP8-CS", 2, 4, 1, 64, system) + row("FP8-CS", 1, 16, 1, 256, system) +
         row("FP8-CS", 2, 8, 2, 256, system) + row("FP8-CS", 1, 4, 2, 64, system);
}

std::vector<std::string> names(const std::vector<FreeConstant>& v) {
  std::vector<std::string> out;
  for (const FreeConstant& f : v) out.push_back(f.name);
  return out;
}

simulator::GpuSpec gpu(const std::string& name) {
  Result<presets::Catalog> catalog = presets::Catalog::builtin();
  EXPECT_TRUE(catalog.ok());
  Result<simulator::GpuSpec> g = catalog->gpu(name);
  EXPECT_TRUE(g.ok());
  return *g;
}

TEST(RestrictedFit, FreeSetHasThreeRowsPerConstant) {
  const std::vector<AccuracyCase> six = cases_of(six_fp8_rows());
  ASSERT_EQ(six.size(), 6u);
  const FreeSet s = select_free_constants(six);
  // 6 rows: two free constants, the FP8 GEMM scale first, then attention.
  EXPECT_EQ(names(s.free),
            (std::vector<std::string>{"fp8_gemm_efficiency", "flash_attention_efficiency"}));
  // Every row exercises FP8, attention and the launch cost: all eligible.
  EXPECT_EQ(names(s.eligible), (std::vector<std::string>{"fp8_gemm_efficiency",
                                                         "flash_attention_efficiency",
                                                         "kernel_overhead_s"}));
  // 9 rows, 3 of them BF16: three free, BF16's scale eligible (3 rows).
  const std::vector<AccuracyCase> nine =
      cases_of(six_fp8_rows() + row("BF16", 1, 8, 1, 128) + row("BF16", 2, 4, 1, 64) +
               row("BF16", 1, 16, 1, 256));
  const FreeSet n = select_free_constants(nine);
  EXPECT_EQ(names(n.free), (std::vector<std::string>{"fp8_gemm_efficiency", "gemm_efficiency",
                                                     "flash_attention_efficiency"}));
  // Two BF16 rows are too few for their own scale: it follows FP8's.
  const std::vector<AccuracyCase> eight =
      cases_of(six_fp8_rows() + row("BF16", 1, 8, 1, 128) + row("BF16", 2, 4, 1, 64));
  const FreeSet e = select_free_constants(eight);
  EXPECT_EQ(names(e.free),
            (std::vector<std::string>{"fp8_gemm_efficiency", "flash_attention_efficiency"}));
  // Two rows: one constant still (the most-exercised), never none.
  const std::vector<AccuracyCase> two = cases_of(row("FP8-CS", 1, 8, 1, 128) +
                                                 row("FP8-CS", 2, 4, 1, 64));
  EXPECT_EQ(names(select_free_constants(two, 2).free),
            (std::vector<std::string>{"fp8_gemm_efficiency"}));
  // Fewer rows than the rule asks: still the first candidate (the fit warns).
  const FreeSet under = select_free_constants(two, 3);
  EXPECT_TRUE(under.eligible.empty());
  EXPECT_EQ(names(under.free), (std::vector<std::string>{"fp8_gemm_efficiency"}));
}

TEST(RestrictedFit, RunsOnlyWhenTheFullFitIsUnderdetermined) {
  const std::vector<AccuracyCase> six = cases_of(six_fp8_rows());
  CalibrationOptions o;
  o.fit_flash_attention = true;
  // The full fit: 6 Roofline constants (no 16-bit row), FP8, attention.
  EXPECT_EQ(full_fit_constants(six, o), 8);
  EXPECT_FALSE(use_restricted_fit(six, o));  // no reference: the full fit
  o.prior_reference = std::make_shared<const simulator::GpuSpec>(gpu("h100-sxm"));
  EXPECT_TRUE(use_restricted_fit(six, o));  // 6 < 3 x 8
  std::vector<AccuracyCase> many;
  for (int i = 0; i < 4; ++i) many.insert(many.end(), six.begin(), six.end());
  EXPECT_FALSE(use_restricted_fit(many, o));  // 24 >= 3 x 8
}

TEST(RestrictedFit, PriorIsTheReferenceScaledByDatasheetRatios) {
  const simulator::GpuSpec h100 = gpu("h100-sxm");
  const simulator::GpuSpec b200 = gpu("b200");
  AccuracyConstants initial;
  initial.roofline = b200.roofline;
  initial.roofline.moe_a2a_efficiency = 0.42;
  const AccuracyConstants p = prior_constants(b200, h100, initial);
  const simulator::RooflineConstants& r = h100.roofline;
  // Efficiencies: the same fraction of the cited ceiling.
  EXPECT_NEAR(p.roofline.fp8_gemm_efficiency,
              r.fp8_gemm_efficiency / h100.ceilings.fp8_gemm_efficiency *
                  b200.ceilings.fp8_gemm_efficiency,
              1e-12);
  EXPECT_NEAR(p.roofline.flash_attention_efficiency,
              r.flash_attention_efficiency / h100.ceilings.flash_attention_efficiency *
                  b200.ceilings.flash_attention_efficiency,
              1e-12);
  // No FP4 on the H100: its FP8 fraction of the B200's FP4 ceiling.
  EXPECT_NEAR(p.roofline.fp4_gemm_efficiency,
              r.fp8_gemm_efficiency / h100.ceilings.fp8_gemm_efficiency *
                  b200.ceilings.fp4_gemm_efficiency,
              1e-12);
  EXPECT_LE(p.roofline.gemm_efficiency, b200.ceilings.gemm_efficiency + 1e-12);
  // gemm_dim_half: (2,250 / 989) / (7.7 / 3.35) of the H100's, about 0.99.
  EXPECT_NEAR(p.roofline.gemm_dim_half / r.gemm_dim_half, (2250.0 / 989) / (7.7 / 3.35), 1e-9);
  // SM contention: the same NCCL channels over 148 SMs instead of 132.
  EXPECT_NEAR(p.roofline.comm_compute_slowdown, r.comm_compute_slowdown * 132 / 148, 1e-12);
  EXPECT_EQ(p.roofline.kernel_overhead_s, r.kernel_overhead_s);
  // The MoE constants stay the target's.
  EXPECT_EQ(p.roofline.moe_a2a_efficiency, 0.42);
}

TEST(RestrictedFit, BoundsStopAtTheCitedCeilings) {
  const simulator::GpuSpec b200 = gpu("b200");
  Result<FreeBounds> fp8 = free_constant_bounds("fp8_gemm_efficiency", b200);
  ASSERT_TRUE(fp8.ok());
  EXPECT_EQ(fp8->hi, 1.0);  // a scale of the ceiling
  EXPECT_NEAR(fp8->lo * b200.ceilings.fp8_gemm_efficiency, 0.3, 1e-12);
  Result<FreeBounds> flash = free_constant_bounds("flash_attention_efficiency", b200);
  ASSERT_TRUE(flash.ok());
  EXPECT_EQ(flash->hi, b200.ceilings.flash_attention_efficiency);
  EXPECT_LT(flash->hi, 1.0);  // a cited ceiling, not "unknown"
  EXPECT_FALSE(free_constant_bounds("memory_efficiency", b200).ok());
  // A scale of 1 is the ceiling; held GEMM precisions follow the free scale.
  AccuracyConstants prior;
  const std::vector<FreeConstant> free = {{"fp8_gemm_efficiency", 6}};
  const AccuracyConstants k = restricted_constants(prior, b200, free, {1.0});
  EXPECT_DOUBLE_EQ(k.roofline.fp8_gemm_efficiency, b200.ceilings.fp8_gemm_efficiency);
  EXPECT_DOUBLE_EQ(k.roofline.gemm_efficiency, b200.ceilings.gemm_efficiency);
  EXPECT_DOUBLE_EQ(k.roofline.fp4_gemm_efficiency, b200.ceilings.fp4_gemm_efficiency);
  const AccuracyConstants half = restricted_constants(prior, b200, free, {0.5});
  EXPECT_DOUBLE_EQ(half.roofline.gemm_efficiency, 0.5 * b200.ceilings.gemm_efficiency);
}

TEST(RestrictedFit, RecoversKnownConstantsAndPinsAtTheCeiling) {
  std::vector<AccuracyCase> cases = cases_of(six_fp8_rows());
  const simulator::GpuSpec b200 = gpu("b200");
  CalibrationOptions o;
  o.fit_flash_attention = true;
  o.prior_reference = std::make_shared<const simulator::GpuSpec>(gpu("h100-sxm"));
  const AccuracyConstants initial = constants_of(cases.front());
  const AccuracyConstants prior = prior_constants(b200, *o.prior_reference, initial);
  const std::vector<FreeConstant> free = select_free_constants(cases).free;
  // "Measured" times simulated with a known FP8 scale and attention efficiency.
  const AccuracyConstants truth = restricted_constants(prior, b200, free, {0.8, 0.45});
  std::vector<AccuracyCase> sim = cases;
  apply_constants(truth, &sim);
  Result<std::vector<double>> t = predict_iteration_times(sim, nullptr);
  ASSERT_TRUE(t.ok());
  for (size_t i = 0; i < cases.size(); ++i) cases[i].run.iteration_time_s = (*t)[i];
  Result<CalibrationResult> fit = calibrate(cases, initial, o);  // dispatches: 6 < 3 x 8
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_NEAR(fit->constants.roofline.fp8_gemm_efficiency, truth.roofline.fp8_gemm_efficiency,
              0.01 * truth.roofline.fp8_gemm_efficiency);
  EXPECT_NEAR(fit->constants.roofline.flash_attention_efficiency, 0.45, 0.01 * 0.45);
  EXPECT_LT(fit->in_sample_mape, 0.002);
  EXPECT_NE(fit->summary.find("restricted dense fit"), std::string::npos);
  EXPECT_TRUE(fit->at_bound.empty());
  // Twice faster than the ceilings allow: the GEMM scale stops at its ceiling.
  for (AccuracyCase& c : cases) c.run.iteration_time_s *= 0.5;
  Result<CalibrationResult> fast = calibrate(cases, initial, o);
  ASSERT_TRUE(fast.ok()) << fast.status().message();
  EXPECT_LE(fast->constants.roofline.fp8_gemm_efficiency, b200.ceilings.fp8_gemm_efficiency + 1e-9);
  EXPECT_LE(fast->constants.roofline.flash_attention_efficiency,
            b200.ceilings.flash_attention_efficiency + 1e-9);
  EXPECT_NE(std::find(fast->at_bound.begin(), fast->at_bound.end(),
                      "fp8_gemm_efficiency at its upper bound"),
            fast->at_bound.end());
}

// The pooled fit (CalibrationOptions::pool): B200 rows fitted alongside
// GB200 rows, each GPU with its own FP8 scale and one attention efficiency
// and launch cost for both, recovers the B200 constants the rows were
// simulated with; only the B200 rows are scored. A pool of the same GPU is
// an error.
TEST(RestrictedFit, PooledFitKeepsPerGpuGemmScalesAndSharesAttention) {
  std::vector<AccuracyCase> cases = cases_of(six_fp8_rows());
  std::vector<AccuracyCase> pool = cases_of(six_fp8_rows("DGX-GB200"));
  const simulator::GpuSpec b200 = gpu("b200"), gb200 = gpu("gb200");
  ASSERT_EQ(pool.front().config.cluster.gpu.name, "gb200");
  CalibrationOptions o;
  o.fit_flash_attention = true;
  o.prior_reference = std::make_shared<const simulator::GpuSpec>(gpu("h100-sxm"));
  std::vector<AccuracyCase> both = cases;
  both.insert(both.end(), pool.begin(), pool.end());
  const std::vector<FreeConstant> free = select_free_constants(both).free;
  ASSERT_EQ(names(free), (std::vector<std::string>{"fp8_gemm_efficiency",
                                                   "flash_attention_efficiency",
                                                   "kernel_overhead_s"}));
  const auto simulate_with = [&](std::vector<AccuracyCase>* rows, const simulator::GpuSpec& g,
                                 double fp8_scale) {
    const AccuracyConstants prior =
        prior_constants(g, *o.prior_reference, constants_of(rows->front()));
    const AccuracyConstants truth = restricted_constants(prior, g, free, {fp8_scale, 0.45, 2e-5});
    std::vector<AccuracyCase> sim = *rows;
    apply_constants(truth, &sim);
    Result<std::vector<double>> t = predict_iteration_times(sim, nullptr);
    ASSERT_TRUE(t.ok());
    for (size_t i = 0; i < rows->size(); ++i) (*rows)[i].run.iteration_time_s = (*t)[i];
  };
  simulate_with(&cases, b200, 0.8);
  simulate_with(&pool, gb200, 0.7);
  o.pool = std::make_shared<const std::vector<AccuracyCase>>(pool);
  Result<CalibrationResult> fit = calibrate(cases, constants_of(cases.front()), o);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_NEAR(fit->constants.roofline.fp8_gemm_efficiency,
              0.8 * b200.ceilings.fp8_gemm_efficiency, 0.01);
  EXPECT_NEAR(fit->constants.roofline.flash_attention_efficiency, 0.45, 0.01);
  EXPECT_LT(fit->in_sample_mape, 0.005);
  EXPECT_NE(fit->summary.find("pooled with 6 rows of gb200"), std::string::npos) << fit->summary;
  // The same GPU as a pool is refused.
  o.pool = std::make_shared<const std::vector<AccuracyCase>>(cases);
  EXPECT_FALSE(calibrate(cases, constants_of(cases.front()), o).ok());
}

}  // namespace
}  // namespace llmplan::planner

// simulator/error_band.h: the conditional band (groups of runs like the
// plan, widening to coarser groups), its preset keys and the shipped H100
// band.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "presets/catalog.h"
#include "simulator/cluster_json.h"
#include "simulator/error_band.h"
#include "base/strict_json.h"
#include "tests/simulator/test_cluster.h"

namespace llmplan::simulator {
namespace {

boost::json::value parse(const std::string& text) { return testing::parse_json(text); }

Status apply_validation(const std::string& text, GpuSpec* gpu) {
  return apply_gpu_json(parse(R"({"validation": )" + text + "}"), "gpus.json: gpus[0]", gpu);
}

// Pooled band 0.9 .. 1.1 over 40 rows, with groups.
std::string validation_with_groups(const std::string& groups) {
  return R"({"calibrated": true, "held_out_error": {"samples": 40, "source": "cmd",
    "quantiles": [{"p": 0.1, "ratio": 0.9}, {"p": 0.9, "ratio": 1.1}], "groups": [)" +
         groups + "]}}";
}

constexpr const char* kGroups = R"(
  {"key": "Megatron-Core", "samples": 30, "quantiles": [{"p": 0.1, "ratio": 0.85}, {"p": 0.9, "ratio": 1.2}]},
  {"key": "Megatron-Core, dense, fp8", "samples": 12, "quantiles": [{"p": 0.1, "ratio": 0.8}, {"p": 0.9, "ratio": 1.3}]},
  {"key": "Megatron-Core, dense, fp8, pp > 1, ZeRO 0-1, >= 256 GPUs", "samples": 9, "quantiles": [{"p": 0.1, "ratio": 0.99}, {"p": 0.9, "ratio": 1.01}]})";

TEST(ErrorBandGroups, KeysGoFromFinestToPooledInTheFixedOrder) {
  BandFeatures f;
  f.fp8 = true;
  f.pipeline = true;
  f.gpu_bucket = 2;
  const std::vector<std::string> want = {
      "Megatron-Core, dense, fp8, pp > 1, ZeRO 0-1, >= 256 GPUs",
      "Megatron-Core, dense, fp8, pp > 1, ZeRO 0-1",
      "Megatron-Core, dense, fp8, pp > 1",
      "Megatron-Core, dense, fp8",
      "Megatron-Core, dense",
      "Megatron-Core",
      "all runs"};
  EXPECT_EQ(band_group_keys(f), want);
  BandFeatures g;
  g.pytorch_fsdp = g.moe = g.sharded = true;
  EXPECT_EQ(band_group_keys(g).front(), "PyTorch FSDP, MoE, 16-bit, pp = 1, ZeRO 2-3, <= 8 GPUs");
  EXPECT_TRUE(is_band_group_key("PyTorch FSDP, MoE"));
  EXPECT_FALSE(is_band_group_key("all runs"));
  EXPECT_FALSE(is_band_group_key("dense, fp8"));  // not a prefix of the order
  EXPECT_EQ(band_gpu_bucket(8), 0);
  EXPECT_EQ(band_gpu_bucket(9), 1);
  EXPECT_EQ(band_gpu_bucket(255), 1);
  EXPECT_EQ(band_gpu_bucket(256), 2);
}

TEST(ErrorBandGroups, TakesTheFinestGroupWithEnoughRowsThenWidens) {
  GpuSpec g = testing::a100_cluster().gpu;
  ASSERT_TRUE(apply_validation(validation_with_groups(kGroups), &g).ok());
  BandFeatures fp8_large;
  fp8_large.fp8 = fp8_large.pipeline = true;
  fp8_large.gpu_bucket = 2;
  // The finest group has 9 < kMinBandSamples rows: skipped for the fp8 one.
  const ErrorBand a = error_band(g, fp8_large);
  EXPECT_EQ(a.group, "Megatron-Core, dense, fp8");
  EXPECT_EQ(a.samples, 12);
  EXPECT_DOUBLE_EQ(a.ratio_at(0.9), 1.3);
  EXPECT_NE(a.describe().find("from 12 held-out runs like this plan: Megatron-Core, dense, fp8"),
            std::string::npos)
      << a.describe();
  // 16-bit: no fp8 group; widens past "Megatron-Core, dense" (not stored).
  BandFeatures bf16 = fp8_large;
  bf16.fp8 = false;
  EXPECT_EQ(error_band(g, bf16).group, "Megatron-Core");
  EXPECT_DOUBLE_EQ(error_band(g, bf16).ratio_at(0.1), 0.85);
  // Another stack: nothing stored, the pooled band.
  BandFeatures fsdp;
  fsdp.pytorch_fsdp = true;
  const ErrorBand p = error_band(g, fsdp);
  EXPECT_EQ(p.group, kPooledBandKey);
  EXPECT_EQ(p.samples, 40);
  EXPECT_DOUBLE_EQ(p.ratio_at(0.9), 1.1);
  EXPECT_EQ(error_band(g).group, kPooledBandKey);
  // An uncalibrated GPU has no band whatever the plan.
  EXPECT_FALSE(error_band(testing::a100_cluster().gpu, fp8_large).known);
}

TEST(ErrorBandGroups, PlanFeatures) {
  const Model m = testing::gpt(24, 2048, 16, 2048);
  Plan plan;
  plan.tensor_parallel = 8;
  plan.pipeline_parallel = 4;
  plan.data_parallel = 16;
  plan.precision = Precision::kFp8;
  plan.distributed_optimizer = true;
  const BandFeatures f = band_features(m, plan);
  EXPECT_FALSE(f.pytorch_fsdp);
  EXPECT_FALSE(f.moe);
  EXPECT_TRUE(f.fp8);
  EXPECT_TRUE(f.pipeline);
  EXPECT_FALSE(f.sharded);  // ZeRO-1
  EXPECT_EQ(f.gpu_bucket, 2);  // 512 GPUs
  plan.zero_stage = 3;
  EXPECT_TRUE(band_features(m, plan).sharded);
}

TEST(ErrorBandGroups, PresetKeysRoundTripAndAreReadStrictly) {
  GpuSpec g = testing::a100_cluster().gpu;
  ASSERT_TRUE(apply_validation(validation_with_groups(kGroups), &g).ok());
  ASSERT_EQ(g.validation.groups.size(), 3u);
  EXPECT_EQ(g.validation.groups[1].key, "Megatron-Core, dense, fp8");
  EXPECT_EQ(g.validation.groups[1].samples, 12);
  GpuSpec back;
  ASSERT_TRUE(apply_gpu_json(gpu_to_json(g), "g", &back).ok());
  EXPECT_EQ(back, g);
  const struct {
    std::string groups, expect;
  } bad[] = {
      {R"({"key": "Megatron-Core", "samples": 3, "quantiles": [{"p": 0.5, "ratio": 1}], "rows": 3})",
       "held_out_error.groups[0]: unknown key \"rows\""},
      {R"({"key": "fp8", "samples": 3, "quantiles": [{"p": 0.5, "ratio": 1}]})",
       "validation.groups[0].key: \"fp8\" is not a group"},
      {R"({"key": "all runs", "samples": 3, "quantiles": [{"p": 0.5, "ratio": 1}]})",
       "validation.groups[0].key"},
      {R"({"key": "Megatron-Core", "samples": 3, "quantiles": [{"p": 0.5, "ratio": 1}]},
          {"key": "Megatron-Core", "samples": 4, "quantiles": [{"p": 0.5, "ratio": 1}]})",
       "validation.groups[1].key: \"Megatron-Core\" given twice"},
      {R"({"key": "Megatron-Core", "samples": 41, "quantiles": [{"p": 0.5, "ratio": 1}]})",
       "validation.groups[0].samples"},
      {R"({"key": "Megatron-Core", "samples": 3, "quantiles": [{"p": 0.5, "ratio": 1.1}, {"p": 0.6, "ratio": 1}]})",
       "validation.groups[0].quantiles[1].ratio"},
      {R"({"key": "Megatron-Core", "samples": 3})", "groups[0].quantiles: missing"},
  };
  for (const auto& c : bad) {
    GpuSpec h = testing::a100_cluster().gpu;
    const Status s = apply_validation(validation_with_groups(c.groups), &h);
    ASSERT_FALSE(s.ok()) << c.groups;
    EXPECT_NE(s.message().find(c.expect), std::string::npos) << s.message();
    EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
  }
}

// The shipped H100 preset: an MoE, FP8, 1,024-GPU plan has a wider band
// than a small bf16 FSDP plan, and each names the runs it comes from.
TEST(ErrorBandGroups, ShippedH100BandIsWiderForMoeFp8LargePlans) {
  Result<presets::Catalog> catalog = presets::Catalog::builtin();
  ASSERT_TRUE(catalog.ok());
  Result<GpuSpec> h100 = catalog->gpu("h100-sxm");
  ASSERT_TRUE(h100.ok());
  ASSERT_FALSE(h100->validation.groups.empty());
  BandFeatures moe;
  moe.moe = moe.fp8 = moe.pipeline = true;
  moe.gpu_bucket = 2;
  BandFeatures small;
  small.sharded = true;
  small.gpu_bucket = 0;
  const ErrorBand wide = error_band(*h100, moe);
  const ErrorBand narrow = error_band(*h100, small);
  ASSERT_TRUE(wide.known && narrow.known);
  EXPECT_NE(wide.group.find("MoE"), std::string::npos) << wide.group;
  EXPECT_GE(wide.samples, kMinBandSamples);
  EXPECT_GE(narrow.samples, kMinBandSamples);
  const double wide_width = wide.ratio_at(0.9) - wide.ratio_at(0.1);
  const double narrow_width = narrow.ratio_at(0.9) - narrow.ratio_at(0.1);
  // Recorded: about 1.2 and 0.2 (docs/planner.md, "Error band").
  EXPECT_GT(wide_width, 2 * narrow_width) << wide.describe() << " vs " << narrow.describe();
  // The pooled band is narrower than the MoE one as well.
  const ErrorBand pooled = error_band(*h100);
  EXPECT_GT(wide_width, pooled.ratio_at(0.9) - pooled.ratio_at(0.1));
}

}  // namespace
}  // namespace llmplan::simulator

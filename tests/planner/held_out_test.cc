// planner/accuracy/held_out.h: the quantiles and MFU range calibrate records.
#include "planner/accuracy/held_out.h"

#include <gtest/gtest.h>

#include "presets/catalog.h"

namespace llmplan::planner {
namespace {

TEST(HeldOut, EmpiricalQuantilesInterpolateOrderStatistics) {
  const auto q = empirical_quantiles({5, 1, 4, 2, 3}, {0.0, 0.1, 0.25, 0.5, 0.95, 1.0});
  ASSERT_EQ(q.size(), 6u);
  EXPECT_DOUBLE_EQ(q[0].second, 1.0);
  EXPECT_DOUBLE_EQ(q[1].second, 1.4);  // position 0.4
  EXPECT_DOUBLE_EQ(q[2].second, 2.0);
  EXPECT_DOUBLE_EQ(q[3].second, 3.0);
  EXPECT_DOUBLE_EQ(q[4].second, 4.8);
  EXPECT_DOUBLE_EQ(q[5].second, 5.0);
  EXPECT_DOUBLE_EQ(q[1].first, 0.1);
  const auto one = empirical_quantiles({7}, {0.05, 0.95});
  EXPECT_DOUBLE_EQ(one[0].second, 7.0);
  EXPECT_DOUBLE_EQ(one[1].second, 7.0);
}

TEST(HeldOut, MeasuredMfuAndReport) {
  Result<presets::Catalog> catalog = presets::Catalog::builtin();
  ASSERT_TRUE(catalog.ok());
  MeasuredRun run;
  run.line = 2;
  run.num_gpus = 8;
  run.global_batch = 32;
  run.micro_batch = 4;
  run.hidden_size = 1024;
  run.num_heads = 16;
  run.num_layers = 24;
  run.seq_length = 1024;
  run.tensor = 2;
  run.data = 2;
  run.pipeline = 2;
  run.iteration_time_s = 0.2197;
  Result<std::vector<AccuracyCase>> cases =
      make_accuracy_cases({run}, "runs.csv", *catalog, nullptr);
  ASSERT_TRUE(cases.ok()) << cases.status().message();
  const std::vector<double> mfu = measured_mfu(*cases);
  ASSERT_EQ(mfu.size(), 1u);
  const double flops = (*cases)[0].config.model.model_flops_per_step(32);
  EXPECT_NEAR(mfu[0], flops / (0.2197 * 8 * 312e12), 1e-12);
  const std::string text = held_out_report(*cases, {0.2}, {0}, 5);
  EXPECT_NE(text.find("P50 1.0985"), std::string::npos) << text;
  EXPECT_NE(text.find("llmplan calibrate runs.csv --gpu a100-80gb -o FILE --folds 5"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"samples\": 1"), std::string::npos) << text;
  // One row: no group of >= 10 rows, and no other fold to check it against.
  EXPECT_NE(text.find("\"groups\": []"), std::string::npos) << text;
  EXPECT_NE(text.find("n/a"), std::string::npos) << text;
}

TEST(HeldOut, PredictionQuantilesUseTheWeibullPosition) {
  // Position p * (n + 1), 1-based, clamped: n = 9, P10 at 1, P90 at 9.
  const auto q = prediction_quantiles({9, 1, 8, 2, 7, 3, 6, 4, 5}, {0.05, 0.1, 0.25, 0.5, 0.9, 0.95});
  EXPECT_DOUBLE_EQ(q[0].second, 1.0);  // 0.5 clamped to the first
  EXPECT_DOUBLE_EQ(q[1].second, 1.0);
  EXPECT_DOUBLE_EQ(q[2].second, 2.5);
  EXPECT_DOUBLE_EQ(q[3].second, 5.0);
  EXPECT_DOUBLE_EQ(q[4].second, 9.0);
  EXPECT_DOUBLE_EQ(q[5].second, 9.0);  // 9.5 clamped to the last
  // n = 3: position 0.4 and 3.6, clamped to both ends.
  const auto three = prediction_quantiles({0.5, 5, 10}, {0.1, 0.9});
  EXPECT_DOUBLE_EQ(three[0].second, 0.5);
  EXPECT_DOUBLE_EQ(three[1].second, 10.0);
}

// Twelve rows of one kind in two folds: fold 0 holds 1..9, fold 1 holds
// 0.5, 5 and 10. Fold 1's rows are checked against P10-P90 of fold 0 (1 .. 9):
// only 5 is inside. Fold 0's rows against fold 1's (0.5 .. 10): all 9 inside.
// Coverage 10 of 12 in every group (all rows share every group).
TEST(HeldOut, BandCoverageUsesOnlyTheOtherFolds) {
  std::vector<double> ratio = {1, 2, 3, 4, 5, 6, 7, 8, 9, 0.5, 5, 10};
  std::vector<int> fold = {0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1};
  std::vector<simulator::BandFeatures> features(ratio.size());
  const BandCheck check = band_coverage(features, ratio, fold, 10);
  ASSERT_EQ(check.groups.size(), 7u);  // pooled and the 6 levels
  EXPECT_EQ(check.groups[0].key, "all runs");
  EXPECT_EQ(check.groups[1].key, "Megatron-Core");
  EXPECT_EQ(check.groups[6].key, "Megatron-Core, dense, 16-bit, pp = 1, ZeRO 0-1, <= 8 GPUs");
  for (const BandCoverage& c : check.groups) {
    EXPECT_EQ(c.rows, 12);
    EXPECT_EQ(c.evaluated, 12);
    EXPECT_EQ(c.inside, 10) << c.key;
  }
  // The planner's rule: the other folds hold 9 or 3 rows (< 10) of every
  // group, so each row falls back to the other folds' pooled band: the same.
  EXPECT_EQ(check.selected.inside, 10);
  EXPECT_EQ(check.selected.evaluated, 12);
  // With 3 rows enough, fold 0's rows use the finest group of fold 1's rows:
  // still 0.5 .. 10.
  EXPECT_EQ(band_coverage(features, ratio, fold, 3).selected.inside, 10);
  // A group whose rows all lie in one fold cannot be checked.
  const BandCheck one = band_coverage(features, ratio, std::vector<int>(12, 0), 10);
  EXPECT_EQ(one.groups[0].evaluated, 0);
  EXPECT_NE(band_coverage_table(one, false).find("n/a"), std::string::npos);
  EXPECT_NE(band_coverage_table(check, true).find("83 % (10/12)"), std::string::npos)
      << band_coverage_table(check, true);
}

TEST(HeldOut, BandGroupsKeepGroupsWithEnoughRowsCoarseToFine) {
  // 10 fp8 rows with ratio 1.0 .. 1.9 and 5 16-bit rows at 3.
  std::vector<simulator::BandFeatures> features(15);
  std::vector<double> ratio;
  for (int i = 0; i < 15; ++i) {
    features[i].fp8 = i < 10;
    ratio.push_back(i < 10 ? 1.0 + 0.1 * i : 3.0);
  }
  const auto groups = band_groups(features, ratio, {0.1, 0.9}, 10);
  ASSERT_EQ(groups.size(), 6u);
  EXPECT_EQ(groups[0].key, "Megatron-Core");
  EXPECT_EQ(groups[0].samples, 15);
  EXPECT_EQ(groups[1].key, "Megatron-Core, dense");
  EXPECT_EQ(groups[2].key, "Megatron-Core, dense, fp8");
  EXPECT_EQ(groups[2].samples, 10);
  EXPECT_EQ(groups[5].key, "Megatron-Core, dense, fp8, pp = 1, ZeRO 0-1, <= 8 GPUs");
  // n = 10: P10 at position 1.1 (1-based), P90 at 9.9.
  EXPECT_NEAR(groups[2].quantiles[0].second, 1.01, 1e-12);
  EXPECT_NEAR(groups[2].quantiles[1].second, 1.89, 1e-12);
  EXPECT_NEAR(groups[0].quantiles[1].second, 3.0, 1e-12);  // position 14.4 of 15: the 3s
}

}  // namespace
}  // namespace llmplan::planner

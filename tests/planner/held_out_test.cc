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
  const std::string text = held_out_report(*cases, {0.2}, 5);
  EXPECT_NE(text.find("P50 1.0985"), std::string::npos) << text;
  EXPECT_NE(text.find("llmplan calibrate runs.csv --gpu a100-80gb -o FILE --folds 5"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"samples\": 1"), std::string::npos) << text;
}

}  // namespace
}  // namespace llmplan::planner

#include "simulator/schedule.h"

#include <gtest/gtest.h>

#include <set>

namespace llmplan::simulator {
namespace {

TEST(Schedule, OneFOneBWarmsUpThenAlternates) {
  Plan plan;
  plan.pipeline_parallel = 4;
  plan.global_batch_size = 6;
  const auto steps = stage_schedule(plan, 1);  // warm-up of p - 1 - 1 = 2
  ASSERT_EQ(steps.size(), 12u);
  const std::vector<std::pair<bool, int>> expected = {
      {true, 0}, {true, 1}, {true, 2}, {false, 0}, {true, 3}, {false, 1},
      {true, 4}, {false, 2}, {true, 5}, {false, 3}, {false, 4}, {false, 5}};
  for (size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(steps[i].forward, expected[i].first) << i;
    EXPECT_EQ(steps[i].micro_batch, expected[i].second) << i;
  }
}

TEST(Schedule, PeakInFlightClosedFormsEqualTheWalk) {
  for (Schedule schedule : {Schedule::kGpipe, Schedule::kOneFOneB}) {
    for (int p = 1; p <= 9; ++p) {
      for (int m = 1; m <= 20; ++m) {
        Plan plan;
        plan.pipeline_parallel = p;
        plan.global_batch_size = m;
        plan.schedule = schedule;
        for (int stage = 0; stage < p; ++stage) {
          EXPECT_EQ(peak_in_flight(plan, stage), peak_in_flight_by_steps(plan, stage))
              << "schedule " << static_cast<int>(schedule) << " p " << p << " m " << m
              << " stage " << stage;
        }
      }
    }
  }
}

TEST(Schedule, InterleavedCoversEveryChunkAndMicroBatchOnce) {
  Plan plan;
  plan.pipeline_parallel = 4;
  plan.schedule = Schedule::kInterleaved;
  plan.virtual_stages = 3;
  plan.global_batch_size = 8;
  for (int r = 0; r < 4; ++r) {
    const auto steps = stage_schedule(plan, r);
    std::set<std::tuple<bool, int, int>> seen;
    for (const auto& s : steps) {
      EXPECT_TRUE(seen.insert({s.forward, s.virtual_chunk, s.micro_batch}).second);
    }
    EXPECT_EQ(seen.size(), 2u * 8 * 3);
    EXPECT_TRUE(steps.front().forward);
    EXPECT_EQ(steps.front().virtual_chunk, 0);
    EXPECT_FALSE(steps.back().forward);
    EXPECT_EQ(steps.back().virtual_chunk, 0);
  }
}

}  // namespace
}  // namespace llmplan::simulator

#include "simulator/schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

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

TEST(Schedule, ZbH1StepClosedFormEqualsTheList) {
  for (int p = 1; p <= 9; ++p) {
    for (int m = 1; m <= 20; ++m) {
      Plan plan;
      plan.pipeline_parallel = p;
      plan.global_batch_size = m;
      plan.schedule = Schedule::kZbH1;
      for (int stage = 0; stage < p; ++stage) {
        const std::vector<PipelineStep> steps = stage_schedule(plan, stage);
        ASSERT_EQ(steps.size(), static_cast<size_t>(3 * m));
        for (int k = 0; k < 3 * m; ++k) {
          EXPECT_EQ(zb_h1_step(p, m, stage, k), steps[k])
              << "p " << p << " m " << m << " stage " << stage << " step " << k;
        }
      }
    }
  }
}

// peak_in_flight_split walks zb-h1 from the closed form and skips the
// repeated steady iterations: the same peak and counts as a walk of the
// listed schedule, ties included (equal, zero and lopsided byte weights).
TEST(Schedule, ZbH1PeakInFlightSplitEqualsTheListedWalk) {
  auto walk = [](const Plan& plan, int stage, double f, double g) {
    // A forward adds a micro-batch in flight; a full or input backward
    // (B) ends one, and B leaves its weight gradient deferred until W.
    SplitInFlight live, best;
    double best_bytes = -1;
    for (const PipelineStep& step : stage_schedule(plan, stage)) {
      const bool input_backward = !step.forward && step.backward == BackwardKind::kInput;
      const bool weight_backward = !step.forward && step.backward == BackwardKind::kWeight;
      live.forwards += step.forward ? 1 : (weight_backward ? 0 : -1);
      live.deferred_weight_grads += input_backward ? 1 : (weight_backward ? -1 : 0);
      if (const double bytes = live.forwards * f + live.deferred_weight_grads * g;
          bytes > best_bytes) {
        best_bytes = bytes;
        best = live;
      }
    }
    return best;
  };
  const double weights[][2] = {{1, 1}, {1, 0}, {0, 1}, {0, 0}, {3, 1}, {1, 3}, {1, 0.5}};
  int checked = 0;
  for (int p = 1; p <= 9; ++p) {
    for (int m = 1; m <= 24; ++m) {
      Plan plan;
      plan.pipeline_parallel = p;
      plan.global_batch_size = m;
      plan.schedule = Schedule::kZbH1;
      for (int stage = 0; stage < p; ++stage) {
        for (const auto& fg : weights) {
          EXPECT_EQ(peak_in_flight_split(plan, stage, fg[0], fg[1]),
                    walk(plan, stage, fg[0], fg[1]))
              << "p " << p << " m " << m << " stage " << stage << " f " << fg[0] << " g "
              << fg[1];
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 45 * 24 * 7);
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

// The interleaved order step by step, against Megatron-LM's mapping of
// micro-step k (chunk k % (p v) / p, forwards through chunks 0..v-1 and
// backwards v-1..0; micro-batch k / (p v) * p + k % p) and its warm-up of
// (p - r - 1) * 2 + (v - 1) * p forwards (all of them when m = p).
TEST(Schedule, InterleavedFollowsMegatronsMicroStepMapping) {
  int checked = 0;
  for (int p : {2, 3, 4, 8}) {
    for (int v : {2, 3, 5}) {
      for (int groups : {1, 2, 3, 7}) {
        Plan plan;
        plan.pipeline_parallel = p;
        plan.schedule = Schedule::kInterleaved;
        plan.virtual_stages = v;
        plan.global_batch_size = groups * p;  // m, a multiple of p
        const int m = plan.num_micro_batches(), total = m * v;
        auto step = [&](int k, bool forward) {
          const int chunk = k % (p * v) / p;
          return PipelineStep{forward, forward ? chunk : v - 1 - chunk, k / (p * v) * p + k % p};
        };
        for (int r = 0; r < p; ++r) {
          const int warmup = m == p ? total : std::min((p - r - 1) * 2 + (v - 1) * p, total);
          std::vector<PipelineStep> expected;
          for (int k = 0; k < warmup; ++k) expected.push_back(step(k, true));
          for (int k = 0; k < total - warmup; ++k) {
            expected.push_back(step(warmup + k, true));
            expected.push_back(step(k, false));
          }
          for (int k = total - warmup; k < total; ++k) expected.push_back(step(k, false));
          const std::vector<PipelineStep> steps = stage_schedule(plan, r);
          ASSERT_EQ(steps.size(), expected.size());
          for (size_t k = 0; k < steps.size(); ++k) {
            EXPECT_EQ(steps[k].forward, expected[k].forward) << p << " " << v << " " << k;
            EXPECT_EQ(steps[k].virtual_chunk, expected[k].virtual_chunk) << p << " " << v << " " << k;
            EXPECT_EQ(steps[k].micro_batch, expected[k].micro_batch) << p << " " << v << " " << k;
          }
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, (2 + 3 + 4 + 8) * 3 * 4);
}

}  // namespace
}  // namespace llmplan::simulator

// What the tests that hold the fast path against the reference event engine
// share: the times of a stage's breakdown, compared one by one either to the
// bit (==) or within 1e-9 relative, each failure naming the time.
#ifndef LLMPLAN_TESTS_SIMULATOR_TEST_BREAKDOWN_H_
#define LLMPLAN_TESTS_SIMULATOR_TEST_BREAKDOWN_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "simulator/simulate.h"

namespace llmplan::simulator::testing {

// One time of a StageBreakdown and its name in failure messages.
struct BreakdownTime {
  const char* name;
  double StageBreakdown::*field;
};

// The breakdown's times both engines report (expert_compute_s apart: not
// every comparison reads it).
inline constexpr BreakdownTime kBreakdownTimes[] = {
    {"compute_s", &StageBreakdown::compute_s},
    {"recompute_s", &StageBreakdown::recompute_s},
    {"tp_comm_s", &StageBreakdown::tp_comm_s},
    {"host_overhead_s", &StageBreakdown::host_overhead_s},
    {"pp_exposed_s", &StageBreakdown::pp_exposed_s},
    {"bubble_s", &StageBreakdown::bubble_s},
    {"dp_exposed_s", &StageBreakdown::dp_exposed_s},
    {"optimizer_s", &StageBreakdown::optimizer_s},
    {"fp8_cast_s", &StageBreakdown::fp8_cast_s},
    {"fsdp_gather_exposed_s", &StageBreakdown::fsdp_gather_exposed_s},
    {"fsdp_reduce_scatter_exposed_s", &StageBreakdown::fsdp_reduce_scatter_exposed_s},
    {"cp_comm_s", &StageBreakdown::cp_comm_s},
    {"moe_a2a_s", &StageBreakdown::moe_a2a_s},
    {"overlap_slowdown_s", &StageBreakdown::overlap_slowdown_s},
    {"end_s", &StageBreakdown::end_s},
    {"tp_comm_hidden_s", &StageBreakdown::tp_comm_hidden_s},
    {"dp_comm_hidden_s", &StageBreakdown::dp_comm_hidden_s},
    {"fsdp_hidden_s", &StageBreakdown::fsdp_hidden_s},
    {"cp_comm_hidden_s", &StageBreakdown::cp_comm_hidden_s},
    {"moe_a2a_hidden_s", &StageBreakdown::moe_a2a_hidden_s},
};

// Whether `a` and `b` agree within 1e-9 relative (or are equal).
inline bool close(double a, double b) {
  return a == b || std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b));
}

// Expects every time of kBreakdownTimes equal (==) in `a` and `b`.
inline void expect_identical_breakdown(const StageBreakdown& a, const StageBreakdown& b,
                                       const std::string& what) {
  for (const BreakdownTime& t : kBreakdownTimes) {
    EXPECT_EQ(a.*t.field, b.*t.field) << what << " " << t.name;
  }
}

// Expects every time of kBreakdownTimes, and expert_compute_s, close() in
// `a` and `b`.
inline void expect_close_breakdown(const StageBreakdown& a, const StageBreakdown& b,
                                   const std::string& what) {
  for (const BreakdownTime& t : kBreakdownTimes) {
    EXPECT_TRUE(close(a.*t.field, b.*t.field))
        << what << " " << t.name << ": " << a.*t.field << " vs " << b.*t.field;
  }
  EXPECT_TRUE(close(a.expert_compute_s, b.expert_compute_s))
      << what << " expert_compute_s: " << a.expert_compute_s << " vs " << b.expert_compute_s;
}

// Two engines' reports stage by stage: exactly the same task count,
// critical stage and number of stages; each stage's breakdown and memory to
// the bit (`exact`) or within 1e-9 relative.
inline void expect_same_stages(const StepReport& a, const StepReport& b, const std::string& what,
                               bool exact) {
  EXPECT_EQ(a.num_tasks, b.num_tasks) << what;
  EXPECT_EQ(a.critical_stage, b.critical_stage) << what;
  EXPECT_EQ(a.stages.size(), b.stages.size()) << what;
  for (size_t r = 0; r < std::min(a.stages.size(), b.stages.size()); ++r) {
    const std::string stage = what + " stage " + std::to_string(r);
    const double a_bytes = a.stages[r].memory.total_bytes();
    const double b_bytes = b.stages[r].memory.total_bytes();
    if (exact) {
      expect_identical_breakdown(a.stages[r].time, b.stages[r].time, stage);
      EXPECT_EQ(a_bytes, b_bytes) << stage << " memory";
    } else {
      expect_close_breakdown(a.stages[r].time, b.stages[r].time, stage);
      EXPECT_TRUE(close(a_bytes, b_bytes)) << stage << " memory: " << a_bytes << " vs " << b_bytes;
    }
  }
}

}  // namespace llmplan::simulator::testing

#endif  // LLMPLAN_TESTS_SIMULATOR_TEST_BREAKDOWN_H_

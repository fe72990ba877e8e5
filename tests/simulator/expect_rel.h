// EXPECT_REL(actual, expected): the simulator tests' check of a figure
// against its hand-worked value, equal within kRel (1e-9) of `expected`.
#ifndef LLMPLAN_TESTS_SIMULATOR_EXPECT_REL_H_
#define LLMPLAN_TESTS_SIMULATOR_EXPECT_REL_H_

#include <gtest/gtest.h>

#include <cmath>

namespace llmplan::simulator::testing {

inline constexpr double kRel = 1e-9;

}  // namespace llmplan::simulator::testing

#define EXPECT_REL(actual, expected) \
  EXPECT_NEAR((actual), (expected), ::llmplan::simulator::testing::kRel * std::fabs(expected))

#endif  // LLMPLAN_TESTS_SIMULATOR_EXPECT_REL_H_

// Sizes llmplan-profile's MoE kernels handle (moe_kernels.cu), shared with
// the host-side plan (moe_plan.h) that validates the flags. Plain C++17, so
// that nvcc's device compilation includes it too.
#ifndef LLMPLAN_PROFILER_MOE_LIMITS_H_
#define LLMPLAN_PROFILER_MOE_LIMITS_H_

namespace llmplan::profiler {

// The routing kernels run one warp per token with experts/32 scores per lane
// in registers, and keep the k selected experts one per lane.
inline constexpr int kMaxRouterExperts = 512;
inline constexpr int kMaxRouterTopK = 16;
// The permutation kernels move rows as 16-byte vectors of bf16.
inline constexpr int kPermuteHiddenMultiple = 8;

}  // namespace llmplan::profiler

#endif  // LLMPLAN_PROFILER_MOE_LIMITS_H_

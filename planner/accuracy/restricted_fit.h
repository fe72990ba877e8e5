// The restricted dense fit (#26): for a GPU with few measured dense rows
// (the Blackwell runs file: 6-8 latest-release dense rows per GPU against
// the 10-11 constants of calibrate()'s full fit), fit only the constants
// the rows can determine and take the rest from a reference GPU's
// calibration (h100-sxm, 105 rows) scaled by datasheet ratios.
//
// Free set. Candidates, in a fixed order of how much of a dense step each
// explains (the linear GEMMs carry most FLOPs, attention the rest; host and
// network figures least), each eligible when at least
// kMinRowsPerFreeConstant of the rows exercise it:
//   1. the GEMM-efficiency scale of each precision the rows ran in, largest
//      row count first ("fp8_gemm_efficiency", "gemm_efficiency" (16-bit),
//      "fp4_gemm_efficiency"): the efficiency is scale x the GPU's cited
//      ceiling (RooflineCeilings), so the scale is bounded by 1;
//   2. "flash_attention_efficiency" (rows with flash attention), bounded by
//      its ceiling;
//   3. "kernel_overhead_s" (every row), bounded to [0, 300 us] as calibrate().
// The first floor(rows / kMinRowsPerFreeConstant) eligible candidates are
// free; at least one (the first eligible) when any is eligible, else (a
// fold of one or two rows) the first candidate any row exercises, and the
// fit says it is underdetermined.
//
// Pooled (CalibrationOptions::pool: dense rows of another GPU of the same
// generation, B200 with GB200): the free set is chosen over both GPUs'
// rows; each GPU gets its own GEMM scale(s) (one die, but the datasheet
// peaks differ by clock and power limit), while flash attention and the host
// launch cost take one value for both (the same SM, kernels and software
// stack; the bounds are both GPUs'), and each GPU's held constants are its
// own prior. The screen covers every solver parameter (3 points each). The
// result is the cases' GPU's constants; its in-sample MAPE counts the cases
// only.
//
// Held constants (prior_constants()): each efficiency as the same fraction
// of the target's ceiling as the reference's fitted value is of the
// reference's ceiling; a GEMM precision that is not free follows the first
// free GEMM scale (the same fraction of its own ceiling; an assumption: one
// tensor-core pipeline, one software stack); gemm_dim_half scaled by the
// ratio of per-SM tensor peak to per-SM HBM bandwidth (the per-tile fixed
// cost is an epilogue write, the main loop a tensor-core rate);
// comm_compute_slowdown scaled by reference SMs / target SMs (the same
// NCCL channels take a smaller share of more SMs); the host costs
// (kernel_overhead_s, host_run_ahead_s, microbatch_overhead_s,
// iteration_overhead_s) carried over unchanged (host-side Python and
// launch costs: an assumption, the host CPUs differ); the MoE constants and
// the network are the target's own (`initial`'s), never touched here.
#ifndef LLMPLAN_PLANNER_ACCURACY_RESTRICTED_FIT_H_
#define LLMPLAN_PLANNER_ACCURACY_RESTRICTED_FIT_H_

#include <string>
#include <vector>

#include "planner/accuracy/accuracy.h"
#include "simulator/cluster.h"

namespace llmplan::planner {

// Rows per free constant a fit needs to count as determined (#26).
inline constexpr int kMinRowsPerFreeConstant = 3;

// One constant of the free set with the rows that exercise it.
struct FreeConstant {
  std::string name;  // a RooflineConstants field name
  int rows = 0;
};

struct FreeSet {
  std::vector<FreeConstant> free;      // fitted, in candidate order
  std::vector<FreeConstant> eligible;  // every candidate with enough rows
  int rows = 0;                        // rows of the fit
};

// The free set of a restricted fit of `cases` (the rule above). Pure.
FreeSet select_free_constants(const std::vector<AccuracyCase>& cases,
                              int min_rows_per_constant = kMinRowsPerFreeConstant);

// How many constants calibrate()'s full fit frees for `cases` under
// `options` (the seven Roofline constants less gemm_efficiency without
// 16-bit rows, plus the network, flash attention, stack, FP8 and FP4 factors
// it fits). Pure.
int full_fit_constants(const std::vector<AccuracyCase>& cases, const CalibrationOptions& options);

// Whether calibrate() runs the restricted fit: a reference GPU is given
// (CalibrationOptions::prior_reference) and the rows are fewer than
// kMinRowsPerFreeConstant x full_fit_constants(). Pure.
bool use_restricted_fit(const std::vector<AccuracyCase>& cases, const CalibrationOptions& options);

// The held values of a restricted fit on `target` (the rules above), from
// the reference GPU's calibrated constants and ceilings; the MoE constants
// and the network come from `initial`. Pure.
AccuracyConstants prior_constants(const simulator::GpuSpec& target,
                                  const simulator::GpuSpec& reference,
                                  const AccuracyConstants& initial);

// The bounds of a free constant on `gpu` in fitted units: a GEMM
// scale in [0.3 / ceiling clamped to <= 1, 1] of the ceiling (so the
// efficiency is at most the ceiling and at least 0.3 where the ceiling
// allows), flash attention in [0.2, its ceiling], kernel_overhead_s in
// [0, 300e-6]. InvalidArgument for another name.
struct FreeBounds {
  double lo = 0, hi = 0;
};
Result<FreeBounds> free_constant_bounds(const std::string& name, const simulator::GpuSpec& gpu);

// `prior` with the free constants set to `values` (fitted units: GEMM
// scales, efficiencies, seconds), the GEMM precisions that are not free
// following the first free GEMM scale. REQUIRES: values.size() ==
// free.size(). Pure.
AccuracyConstants restricted_constants(const AccuracyConstants& prior,
                                       const simulator::GpuSpec& gpu,
                                       const std::vector<FreeConstant>& free,
                                       const std::vector<double>& values);

// Ceres' robust cost (1/2 sum of Huber(r^2) over log(predicted / measured)) of constants `k` over
// `cases`: what both fits minimise, used to screen their start points (calibration.cc).
Result<double> robust_cost(const std::vector<AccuracyCase>& cases, const AccuracyConstants& k);

// The restricted fit (called by calibrate() when use_restricted_fit()):
// a fixed screen of 3 values per free constant (the best point polished
// with Ceres, Huber 0.03 on log(predicted / measured), within the bounds),
// deterministic. The summary names the free and held constants, the prior
// and the rows per free constant; at_bound names free constants pinned at a
// bound. FailedPrecondition when no row exercises any candidate (never for
// rows that run flash attention or any GEMM).
Result<CalibrationResult> calibrate_restricted(const std::vector<AccuracyCase>& cases,
                                               const AccuracyConstants& initial,
                                               const CalibrationOptions& options);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_ACCURACY_RESTRICTED_FIT_H_

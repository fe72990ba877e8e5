// Caveats of a simulated result: where it lies outside what its cost model
// was calibrated on, so that a report can say how far to trust it.
//
// simulate() computes them as a bitmask (StepReport::caveats) without
// building any text, so the planner's ~10^5 simulations stay cheap; a report
// renders the set with caveat_list(). Codes are a contract for scripts
// (JSON "caveats": [{"code", "text"}]): add freely, rename none.
#ifndef LLMPLAN_SIMULATOR_CAVEATS_H_
#define LLMPLAN_SIMULATOR_CAVEATS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "simulator/cluster.h"
#include "simulator/plan.h"

namespace llmplan::simulator {

// One bit per caveat.
enum CaveatBit : uint32_t {
  // "uncalibrated-gpu": the GPU preset's Roofline constants were never fitted
  // to measured data (GpuValidation::calibrated is false): error unknown, or
  // (GpuValidation::derived_from) carried over from another GPU's fit.
  kCaveatUncalibratedGpu = 1u << 0,
  // "mfu-above-validated": the predicted MFU is above the highest MFU of the
  // measured runs the constants were fitted on, like with like: an FP8 plan's
  // MFU against the FP8 peak above the FP8 runs' highest
  // (GpuValidation::max_mfu_fp8), a 16-bit plan's above max_mfu.
  kCaveatMfuAboveValidated = 1u << 1,
  // "flash-attention-unfitted": the plan uses fused flash attention, but the
  // calibration data had none, so flash_attention_efficiency is an assumed
  // constant, not a fitted one.
  kCaveatFlashAttentionUnfitted = 1u << 2,
  // "efficiency-above-ceiling": a Roofline efficiency is above the GPU's
  // physical ceiling (RooflineCeilings), e.g. from a user constants file.
  kCaveatEfficiencyAboveCeiling = 1u << 3,
  // "moe-uncalibrated": a mixture-of-experts model. Its MoE layers (router,
  // permutation, grouped expert GEMMs, dispatch/combine all-to-all) are
  // costed with the GPU's dense-run constants plus three MoE constants
  // fitted on few MoE runs; on the published H100 MoE runs that leaves a
  // large error (kMoeValidationMape, docs/accuracy-*.md).
  kCaveatMoeUncalibrated = 1u << 4,
  // "nvfp4-unvalidated": an NVFP4 plan on a GPU whose calibration data had
  // no NVFP4 runs (GpuValidation::max_mfu_fp4 is 0): its FP4 GEMMs run at
  // an unfitted fp4_gemm_efficiency, so the error is unknown.
  kCaveatNvfp4Unvalidated = 1u << 5,
};
inline constexpr uint32_t kAllCaveats = (1u << 6) - 1;

// Mean absolute error of the shipped H100 constants (dense constants fitted
// on dense runs, the MoE constants -- grouped_gemm_expert_overhead_s,
// moe_a2a_efficiency, moe_a2a_nic_efficiency -- on the MoE rows) on the 16
// expressible MoE rows of data/h100/published_runs.csv: `llmplan validate
// data/h100/published_runs.csv --folds 0`, by_model (qwen3-30b-a3b 19.7 %,
// gpt-oss-120b 15.4 %, qwen3-235b-a22b 2.4 %; the worst row 51.9 %,
// Qwen3-30B-A3B on 26.02); 27.8 % before the MoE constants (#27), 18.9 %
// before the recipes' dispatcher and pipeline split (planner/accuracy/
// moe_recipes.h), 17.7 % before the flex dispatcher's per-node inter-node
// copies (layers/moe_dispatch.h), 13.9 % before GPT-OSS's per-expert FC2
// bias kernels and the recompute modules, 12.9 % before GPT-OSS's unfused
// activation clamp (moe_act_clamp). Held out by model: 19.2 %
// (`llmplan calibrate ... --moe-only`; 13.6 % on the latest release of each
// model; 20.8 % before the activation clamp, 25.2 % before a fitted NIC
// all-to-all efficiency had to be determined by the rows (calibrate_moe),
// 25.5 % before the bias kernels, 25.4 % before the per-node copies, 24.6 %
// before the recipes). Since RoPE is costed (fused, or eager for GPT-OSS) and
// h100-sxm refitted with it: 10.6 % in sample, 18.9 % held out by model
// (13.4 % on the latest release of each model), worst row 52.9 % held out
// (Qwen3-30B-A3B 26.02: `llmplan validate data/h100/published_runs.csv`).
inline constexpr double kMoeValidationMape = 0.106;
inline constexpr double kMoeLeaveOneModelOutMape = 0.189;

// The caveats of a result of MFU `mfu` for `plan` on `gpu` under the
// Roofline cost model with the GPU's own constants. Cheap (a few
// comparisons, no allocation); pure and thread-safe.
uint32_t roofline_caveats(const Plan& plan, const GpuSpec& gpu, double mfu);
// The same, plus kCaveatMoeUncalibrated for an MoE model.
uint32_t roofline_caveats(const Model& model, const Plan& plan, const GpuSpec& gpu, double mfu);

// One caveat for a report.
struct Caveat {
  std::string code;  // stable, e.g. "mfu-above-validated"
  std::string text;  // one line, e.g. "predicted MFU 63.5 % is above ..."
};

// The caveats of `mask` in bit order, their texts quoting `gpu`'s figures
// and `mfu` (of the 16-bit peak) of a plan in `precision`. Unknown bits are
// ignored. Thread-safe.
std::vector<Caveat> caveat_list(uint32_t mask, const GpuSpec& gpu, double mfu,
                                Precision precision);

// The highest validated MFU a plan in `precision` on `gpu` is held to, on
// the scale of that precision's own peak: GpuValidation::max_mfu_fp8 for FP8
// plans where known, max_mfu_fp4 for NVFP4 plans where known, else max_mfu.
double validated_max_mfu(const GpuSpec& gpu, Precision precision);

// The stable code of one bit ("uncalibrated-gpu"), or "" for an unknown bit.
const char* caveat_code(CaveatBit bit);

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_CAVEATS_H_

#include "simulator/caveats.h"

#include <cstdio>

namespace llmplan::simulator {
namespace {

std::string pct(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", 100.0 * fraction);
  return buf;
}

std::string fixed2(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", x);
  return buf;
}

}  // namespace

double validated_max_mfu(const GpuSpec& gpu, Precision precision) {
  const GpuValidation& v = gpu.validation;
  if (precision == Precision::kFp8 && gpu.peak_fp8_flops > 0 && v.max_mfu_fp8 > 0) {
    return v.max_mfu_fp8;
  }
  if (precision == Precision::kNvfp4 && gpu.peak_fp4_flops > 0 && v.max_mfu_fp4 > 0) {
    return v.max_mfu_fp4;
  }
  return v.max_mfu;
}

uint32_t roofline_caveats(const Plan& plan, const GpuSpec& gpu, double mfu) {
  const GpuValidation& v = gpu.validation;
  uint32_t mask = 0;
  if (!v.calibrated) {
    mask |= kCaveatUncalibratedGpu;
  } else {
    // Like with like: an FP8 plan's MFU against the FP8 peak is held to the
    // FP8 runs' highest (max_mfu_fp8), a 16-bit plan's to max_mfu. `mfu` is
    // of the 16-bit peak (simulate's convention).
    const bool fp8 = plan.precision == Precision::kFp8 && gpu.peak_fp8_flops > 0;
    // NVFP4 likewise against the NVFP4 runs' highest; with none, the FP4
    // GEMM efficiency was never fitted: nvfp4-unvalidated instead.
    const bool fp4 = plan.precision == Precision::kNvfp4 && gpu.peak_fp4_flops > 0;
    const double own = fp8 || fp4 ? mfu_of_precision_peak(mfu, gpu, plan.precision) : mfu;
    if (fp4 && !(v.max_mfu_fp4 > 0)) {
      mask |= kCaveatNvfp4Unvalidated;
    } else if (own > validated_max_mfu(gpu, plan.precision)) {
      mask |= kCaveatMfuAboveValidated;
    }
    if (plan.flash_attention && !v.flash_attention) mask |= kCaveatFlashAttentionUnfitted;
  }
  const RooflineConstants& r = gpu.roofline;
  const RooflineCeilings& c = gpu.ceilings;
  if (r.gemm_efficiency > c.gemm_efficiency || r.memory_efficiency > c.memory_efficiency ||
      (plan.flash_attention && r.flash_attention_efficiency > c.flash_attention_efficiency) ||
      (plan.precision == Precision::kNvfp4 && r.fp4_gemm_efficiency > c.fp4_gemm_efficiency)) {
    mask |= kCaveatEfficiencyAboveCeiling;
  }
  return mask;
}

uint32_t roofline_caveats(const Model& model, const Plan& plan, const GpuSpec& gpu, double mfu) {
  uint32_t mask = roofline_caveats(plan, gpu, mfu);
  if (model.is_moe()) mask |= kCaveatMoeUncalibrated;
  return mask;
}

const char* caveat_code(CaveatBit bit) {
  switch (bit) {
    case kCaveatUncalibratedGpu:
      return "uncalibrated-gpu";
    case kCaveatMfuAboveValidated:
      return "mfu-above-validated";
    case kCaveatFlashAttentionUnfitted:
      return "flash-attention-unfitted";
    case kCaveatEfficiencyAboveCeiling:
      return "efficiency-above-ceiling";
    case kCaveatMoeUncalibrated:
      return "moe-uncalibrated";
    case kCaveatNvfp4Unvalidated:
      return "nvfp4-unvalidated";
  }
  return "";
}

std::vector<Caveat> caveat_list(uint32_t mask, const GpuSpec& gpu, double mfu,
                                Precision precision) {
  std::vector<Caveat> out;
  const GpuValidation& v = gpu.validation;
  const RooflineConstants& r = gpu.roofline;
  const RooflineCeilings& c = gpu.ceilings;
  for (uint32_t b = 1; b != 0 && b <= kAllCaveats; b <<= 1) {
    if ((mask & b) == 0) continue;
    const auto bit = static_cast<CaveatBit>(b);
    std::string text;
    switch (bit) {
      case kCaveatUncalibratedGpu:
        text = v.derived_from.empty()
                   ? "GPU " + gpu.name +
                         ": its Roofline constants were never fitted to measured runs, so the "
                         "error of this prediction is unknown"
                   : "GPU " + gpu.name + ": derived, not fitted: its Roofline constants are " +
                         v.derived_from + "'s fit carried over (applied to its own datasheet "
                         "peaks, memory bandwidth and capacity), never fitted to runs on " +
                         gpu.name + ": expect at least " + v.derived_from + "'s error";
        break;
      case kCaveatMfuAboveValidated:
        if (precision == Precision::kFp8 && gpu.peak_fp8_flops > 0) {
          text = "predicted MFU " + pct(mfu_of_precision_peak(mfu, gpu, precision)) +
                 " of the FP8 peak (" + pct(mfu) + " of the BF16 peak) is above the highest (" +
                 pct(validated_max_mfu(gpu, precision)) + ") of the measured " +
                 (v.max_mfu_fp8 > 0 ? "FP8 runs " : "runs ") + gpu.name +
                 "'s constants were fitted on: an extrapolation";
        } else if (precision == Precision::kNvfp4 && gpu.peak_fp4_flops > 0) {
          text = "predicted MFU " + pct(mfu_of_precision_peak(mfu, gpu, precision)) +
                 " of the FP4 peak (" + pct(mfu) + " of the BF16 peak) is above the highest (" +
                 pct(validated_max_mfu(gpu, precision)) + ") of the measured NVFP4 runs " +
                 gpu.name + "'s constants were fitted on: an extrapolation";
        } else {
          text = "predicted MFU " + pct(mfu) + " is above the highest MFU (" + pct(v.max_mfu) +
                 ") of the measured runs " + gpu.name + "'s constants were fitted on" +
                 (v.max_mfu_fp8 > 0 ? " (16-bit runs; FP8 runs are held to their own)" : "") +
                 ": an extrapolation";
        }
        break;
      case kCaveatFlashAttentionUnfitted:
        text = "flash attention runs at an assumed " + fixed2(r.flash_attention_efficiency) +
               " of peak: the calibration data of " + gpu.name +
               " has no flash-attention runs, so that constant was not fitted";
        break;
      case kCaveatEfficiencyAboveCeiling:
        text = "a Roofline efficiency of " + gpu.name + " (GEMM " + fixed2(r.gemm_efficiency) +
               ", memory " + fixed2(r.memory_efficiency) + ", flash attention " +
               fixed2(r.flash_attention_efficiency) + ") is above its physical ceiling (GEMM " +
               fixed2(c.gemm_efficiency) + ", memory " + fixed2(c.memory_efficiency) +
               ", flash attention " + fixed2(c.flash_attention_efficiency) + ")";
        break;
      case kCaveatMoeUncalibrated:
        text = "mixture of experts: the router, token permutation, grouped expert GEMMs and "
               "all-to-alls are costed with the dense constants plus three MoE constants fitted "
               "on few MoE runs; on 16 published H100 MoE runs (Megatron-Bridge) they err by " +
               pct(kMoeValidationMape) + " on average (" + pct(kMoeLeaveOneModelOutMape) +
               " held out by model, up to ~53 % on one row)" +
               (gpu.name.rfind("h100", 0) == 0 ||
                        v.held_out_source.find("MoE rows") == std::string::npos
                    ? std::string()
                    : "; on " + (gpu.name.empty() ? std::string("this GPU") : gpu.name) +
                          " the held-out error of its own MoE runs is in its calibration's "
                          "source (validation.held_out_error) and in the band of this answer");
        break;
      case kCaveatNvfp4Unvalidated:
        text = "NVFP4: " + gpu.name + "'s calibration data has no NVFP4 runs, so its FP4 GEMMs "
               "run at an assumed " + fixed2(r.fp4_gemm_efficiency) +
               " of the FP4 peak, never fitted: the error of this prediction is unknown";
        break;
    }
    out.push_back({caveat_code(bit), text});
  }
  return out;
}

}  // namespace llmplan::simulator

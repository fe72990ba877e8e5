#include "simulator/lowering/precision.h"

#include "simulator/lowering.h"

namespace llmplan::simulator {

double fp8_cast_bytes_per_element(Fp8Recipe recipe) {
  switch (recipe) {
    case Fp8Recipe::kDelayed: return 4.0;
    case Fp8Recipe::kCurrent: return 6.0;
    case Fp8Recipe::kMxfp8: return 4.0 + 2.0 / 32.0;
  }
  return 4.0;
}

namespace lowering {

NumberFormats number_formats(const Plan& plan) {
  NumberFormats f;
  f.fp8 = plan.precision == Precision::kFp8;
  f.p16 = f.fp8 ? Precision::kBf16 : plan.precision;
  f.cast_bytes = fp8_cast_bytes_per_element(plan.fp8_recipe);
  return f;
}

bool runs_in_fp8(KernelKind k) {
  return k == KernelKind::kQkvGemm || k == KernelKind::kOutProjGemm ||
         k == KernelKind::kFc1Gemm || k == KernelKind::kFc2Gemm ||
         k == KernelKind::kExpertFc1Gemm || k == KernelKind::kExpertFc2Gemm;
}

Precision gemm_precision(const NumberFormats& formats, KernelKind kind) {
  return formats.fp8 && runs_in_fp8(kind) ? Precision::kFp8 : formats.p16;
}

bool fp8_cast_kernel(const NumberFormats& formats, Pass pass, double elements, KernelDesc* desc) {
  if (!formats.fp8) return false;
  *desc = KernelDesc();
  desc->kind = KernelKind::kFp8CastTranspose;
  desc->pass = pass == Pass::kForward ? pass : Pass::kBackward;
  desc->bytes = elements * formats.cast_bytes;
  desc->precision = Precision::kFp8;
  return true;
}

}  // namespace lowering
}  // namespace llmplan::simulator

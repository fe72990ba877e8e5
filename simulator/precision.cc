#include "simulator/precision.h"

#include "base/name_table.h"
#include "simulator/cost_model.h"
#include "simulator/plan.h"

namespace llmplan::simulator {

namespace {

// The one table of format names (to_string and the parsers read it).
constexpr Named<Precision> kPrecisionNames[] = {
    {"bf16", Precision::kBf16},
    {"fp16", Precision::kFp16},
    {"fp8", Precision::kFp8},
    {"nvfp4", Precision::kNvfp4},
};
constexpr Named<Fp8Recipe> kFp8RecipeNames[] = {
    {"delayed", Fp8Recipe::kDelayed},
    {"current", Fp8Recipe::kCurrent},
    {"mxfp8", Fp8Recipe::kMxfp8},
};

}  // namespace

const char* to_string(Precision p) { return name_in(kPrecisionNames, p); }
const char* to_string(Fp8Recipe r) { return name_in(kFp8RecipeNames, r); }
bool parse_precision(std::string_view text, Precision* out) {
  return parse_in(kPrecisionNames, text, out);
}
bool parse_fp8_recipe(std::string_view text, Fp8Recipe* out) {
  return parse_in(kFp8RecipeNames, text, out);
}
std::vector<std::string> precision_names() { return names_in(kPrecisionNames); }
std::vector<std::string> fp8_recipe_names() { return names_in(kFp8RecipeNames); }

double gemm_input_bytes_per_element(Precision precision) {
  switch (precision) {
    case Precision::kFp8: return 1.0;
    case Precision::kNvfp4: return kNvfp4BytesPerElement;
    case Precision::kBf16:
    case Precision::kFp16: return 2.0;
  }
  return 2.0;
}

double fp8_cast_bytes_per_element(Fp8Recipe recipe, bool fp8_transpose) {
  // Tensor scaling without a transposed copy writes 1 byte, not 2.
  const double transpose = fp8_transpose ? 0.0 : 1.0;
  switch (recipe) {
    case Fp8Recipe::kDelayed: return 4.0 - transpose;
    case Fp8Recipe::kCurrent: return 6.0 - transpose;
    case Fp8Recipe::kMxfp8: return 4.0 + 2.0 / 32.0;
  }
  return 4.0;
}

double cast_bytes_per_element(const Plan& plan, bool fp8_transpose) {
  return plan.precision == Precision::kNvfp4
             ? kNvfp4CastBytesPerElement
             : fp8_cast_bytes_per_element(plan.fp8_recipe, fp8_transpose);
}

namespace lowering {

NumberFormats number_formats(const Plan& plan, bool fp8_transpose) {
  NumberFormats f;
  f.low = plan.precision;
  f.p16 = low_precision(plan.precision) ? Precision::kBf16 : plan.precision;
  f.cast_bytes = cast_bytes_per_element(plan, fp8_transpose);
  f.mxfp8 = plan.precision == Precision::kFp8 && plan.fp8_recipe == Fp8Recipe::kMxfp8;
  return f;
}

double gathered_bytes_per_element(const NumberFormats& formats) {
  switch (formats.low) {
    case Precision::kFp8: return formats.mxfp8 ? 1.0 + 1.0 / 32.0 : 1.0;
    case Precision::kNvfp4: return 0.5 + 1.0 / 16.0;
    default: return 2.0;
  }
}

bool runs_in_fp8(KernelKind k) {
  return k == KernelKind::kQkvGemm || k == KernelKind::kOutProjGemm ||
         k == KernelKind::kFc1Gemm || k == KernelKind::kFc2Gemm ||
         k == KernelKind::kExpertFc1Gemm || k == KernelKind::kExpertFc2Gemm ||
         k == KernelKind::kMambaInProjGemm || k == KernelKind::kMambaOutProjGemm;
}

Precision gemm_precision(const NumberFormats& formats, KernelKind kind) {
  return low_precision(formats.low) && runs_in_fp8(kind) ? formats.low : formats.p16;
}

bool fp8_cast_kernel(const NumberFormats& formats, Pass pass, double elements, KernelDesc* desc) {
  if (!low_precision(formats.low)) return false;
  *desc = KernelDesc();
  desc->kind = KernelKind::kFp8CastTranspose;
  desc->pass = pass == Pass::kForward ? pass : Pass::kBackward;
  desc->bytes = elements * formats.cast_bytes;
  desc->precision = formats.low;
  return true;
}

}  // namespace lowering
}  // namespace llmplan::simulator

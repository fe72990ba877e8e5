// The number formats of training, in one place: their names (the one parser
// the CLI, the plan JSON reader and the presets use), their bytes per
// element, which GEMMs run in a low-precision format and the casts around
// them. Every other file asks here; a new format is an enumerator below, its
// row in the name table of precision.cc and its cases in the switches there.
//
// Formats (Plan::precision):
//   bf16, fp16  16-bit training: every GEMM in the 16-bit type.
//   fp8         the linear layers' GEMMs (QKV, output projection, FC1, FC2;
//               forward, data and weight gradient) and the MoE experts'
//               grouped GEMMs in FP8 (E4M3 inputs) with Transformer Engine's
//               casts; attention, the router, logits, norms and activations
//               stay bf16. Scales by Plan::fp8_recipe: delayed (an amax
//               history), current (the tensor's own amax) or MXFP8 (an E8M0
//               scale per 32 elements; Blackwell).
//   nvfp4       the same GEMMs in NVFP4 (E2M1 values, an E4M3 scale per 16
//               elements and an FP32 scale per tensor; Blackwell).
//
// FP8 (Transformer Engine's recipes): each such GEMM's input is cast to fp8
// (fp8_cast_transpose) before its forward GEMM, and the gradient of its
// output before its backward GEMMs (4 casts per dense layer each way). Layer
// weights are cast once per step after the optimizer (their fp8 copies are
// cached over the micro-batches; simulate_graph.cc times that cast with the
// optimizer step), at ZeRO-3 per layer after each gather (forward and
// backward; lowering.cc). Tensor-parallel collectives stay bf16.
//
// NVFP4 (Transformer Engine's NVFP4BlockScaling recipe,
// transformer_engine/common/recipe/__init__.py @000b637; NVIDIA, "Pretraining
// Large Language Models with NVFP4", arXiv 2509.25149, section 4): the same
// GEMMs as FP8 -- fprop, dgrad and wgrad all in NVFP4 -- at the FP4 peak, and
// the same casts at the same places, each of kNvfp4CastBytesPerElement: the
// recipe's quantizers have no amax history (the per-tensor FP32 scale is the
// tensor's own amax, read first, as FP8 current scaling), and each cast writes
// a rowwise NVFP4 copy (fprop / dgrad operand) and a columnwise one (wgrad
// operand, after a 16x16 random Hadamard transform for inputs and gradients,
// fp4_quant_fwd_inp / fp4_quant_bwd_grad random_hadamard_transform; with
// stochastic rounding for gradients), each half a byte per element plus an
// E4M3 scale per 16. Weights are quantized in 16x16 2-D blocks
// (fp4_quant_fwd_weight fp4_2d_quantization), no RHT, no stochastic rounding:
// the same bytes. The RHT (a 16x16 matrix per 16 elements) and the random
// numbers are fused into the cast, which stays memory-bound. Attention (fp8_dpa
// False), the router, logits, norms and activations stay bf16. Megatron-Core
// can keep the first and last transformer layers in bf16
// (first_last_layers_bf16, num_layers_at_{start,end}_in_bf16); Megatron-
// Bridge's bf16_with_nvfp4_mixed preset
// (src/megatron/bridge/training/mixed_precision.py) leaves it off, as here.
#ifndef LLMPLAN_SIMULATOR_PRECISION_H_
#define LLMPLAN_SIMULATOR_PRECISION_H_

#include <string>
#include <string_view>
#include <vector>

namespace llmplan::simulator {

struct Plan;
struct KernelDesc;
enum class KernelKind;
enum class Pass;

// Precision of the matrix math. kFp8: the linear layers' GEMMs (QKV, output
// projection, FC1, FC2) run in FP8 with Transformer Engine's casts; attention,
// the logits GEMM, norms and activations stay bf16 (Transformer Engine's and
// Megatron-Core's FP8 training). kNvfp4: the same GEMMs (forward, data and
// weight gradient) in NVFP4 -- E2M1 values, an E4M3 scale per 16 elements and
// an FP32 scale per tensor -- under Transformer Engine's NVFP4BlockScaling
// recipe (transformer_engine/common/recipe/__init__.py @000b637: 16x16 2-D
// weight blocks, random Hadamard transform on the weight-gradient GEMM's
// inputs, stochastic rounding of gradients; attention stays bf16, fp8_dpa
// False); everything else as kFp8 (see the file comment). Blackwell only
// (GpuSpec::peak_fp4_flops > 0).
enum class Precision { kBf16, kFp16, kFp8, kNvfp4 };
// How FP8 tensors get their scales (Transformer Engine recipes): delayed
// scaling (per-tensor scale from an amax history), current scaling (per-
// tensor amax of the tensor itself: one more read before each cast), MXFP8
// (32-element block scales; Blackwell only).
enum class Fp8Recipe { kDelayed, kCurrent, kMxfp8 };

// The names of the formats, as the CLI, the plan JSON and reports spell
// them: "bf16", "fp16", "fp8", "nvfp4"; "delayed", "current", "mxfp8".
const char* to_string(Precision p);
const char* to_string(Fp8Recipe r);
// Parses a name above into `*out` and returns true; false (and `*out` left
// alone) for any other text. The only name-to-format mapping: every reader
// (CLI flags, plan JSON, search spaces) calls these and words its own error.
bool parse_precision(std::string_view text, Precision* out);
bool parse_fp8_recipe(std::string_view text, Fp8Recipe* out);
// Every name, in enumerator order (for the CLI's choice lists and error
// messages).
std::vector<std::string> precision_names();
std::vector<std::string> fp8_recipe_names();

// Whether the linear layers' GEMMs run in a quantized format with Transformer
// Engine's casts around them (fp8 or nvfp4), as opposed to 16-bit training.
inline bool low_precision(Precision p) { return p == Precision::kFp8 || p == Precision::kNvfp4; }

// HBM bytes per element of an NVFP4 tensor: the 4-bit E2M1 value and a
// 1-byte E4M3 scale per 16-element block (the per-tensor FP32 scale is
// negligible); Transformer Engine's NVFP4Tensor (rowwise or columnwise data
// with its scale_inv). 2-D weight blocks (16x16) keep the same 1x16 scale
// layout the FP4 GEMM reads.
inline constexpr double kNvfp4BytesPerElement = 0.5 + 1.0 / 16.0;

// Bytes of the stored copy of a linear GEMM's input: FP8 training keeps the
// inputs of the linear GEMMs (QKV, output projection, FC1, FC2, the expert
// GEMMs) as the fp8 copies their weight-gradient GEMMs read (Transformer
// Engine): 1 byte per element instead of 2. NVFP4 training keeps only the
// columnwise NVFP4 copy the weight-gradient GEMM reads (Transformer Engine's
// _Linear.forward drops the rowwise usage of a quantized input before
// save_for_backward): kNvfp4BytesPerElement.
double gemm_input_bytes_per_element(Precision precision);

// FP8 training (Plan::precision kFp8, Transformer Engine's recipes): HBM
// bytes per element of one fp8_cast_transpose (the profile's convention):
// 4 with delayed scaling (read bf16, write the fp8 copy and its fp8
// transpose, amax fused), 6 with current scaling (one more read of the
// tensor for its amax before the cast), 4 + 2/32 with MXFP8 (a 1-byte scale
// per 32 elements of each copy). Without `fp8_transpose` (Blackwell:
// CostModel::fp8_transpose_copy()) tensor scaling writes no transposed copy,
// one byte less: 3 delayed, 5 current; MXFP8 keeps both copies either way.
double fp8_cast_bytes_per_element(Fp8Recipe recipe, bool fp8_transpose = true);

// NVFP4 training (Plan::precision kNvfp4): HBM bytes per element of one
// cast: the tensor read for its amax (2), read again (2), and written as a
// rowwise and a columnwise NVFP4 copy (2 x kNvfp4BytesPerElement).
inline constexpr double kNvfp4CastBytesPerElement = 4.0 + 2.0 * kNvfp4BytesPerElement;

// Bytes per element of one cast of `plan`'s low precision: nvfp4's above, or
// fp8_cast_bytes_per_element(plan.fp8_recipe, fp8_transpose).
double cast_bytes_per_element(const Plan& plan, bool fp8_transpose = true);

namespace lowering {

// The formats of one plan's kernels (what the layer parts ask:
// gemm_precision() and Emitter::cast()).
struct NumberFormats {
  // fp8 or nvfp4: the linear and expert GEMMs in that format, with casts;
  // else the same as p16.
  Precision low = Precision::kBf16;
  Precision p16 = Precision::kBf16;  // precision of everything else
  double cast_bytes = 4.0;           // cast bytes per element (fp8 or nvfp4)
  bool mxfp8 = false;                // fp8 with MXFP8 block scales (Fp8Recipe::kMxfp8)
};
// `fp8_transpose`: CostModel::fp8_transpose_copy() (cast_bytes_per_element).
NumberFormats number_formats(const Plan& plan, bool fp8_transpose = true);

// Bytes per element of a tensor-parallel all-gather of a linear layer's
// quantized input or output gradient: FP8 1 (one per-tensor scale), MXFP8
// 1 + 1/32 (an E8M0 scale per 32 elements), NVFP4 1/2 + 1/16 (an E4M3
// scale per 16); 2 (bf16) in 16-bit training.
double gathered_bytes_per_element(const NumberFormats& formats);

// The GEMMs that run in FP8 in FP8 training (in NVFP4 in NVFP4 training):
// the linear layers' (QKV, output projection, FC1, FC2), the routed
// experts' grouped GEMMs and the Mamba mixer's in_proj and out_proj.
bool runs_in_fp8(KernelKind kind);

// The precision a GEMM of `kind` runs in.
Precision gemm_precision(const NumberFormats& formats, KernelKind kind);

// FP8 / NVFP4 training: sets `desc` to the cast (fp8_cast_transpose kernel,
// looked up under the plan's low precision, the profile's key; both backward
// passes as kBackward) of `elements` elements in `pass` and returns true.
// Returns false in 16-bit training.
bool fp8_cast_kernel(const NumberFormats& formats, Pass pass, double elements, KernelDesc* desc);

}  // namespace lowering
}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_PRECISION_H_

// Internal to the lowering: the number formats a plan's kernels run in, and
// the casts low-precision training adds around its GEMMs (FP8 and NVFP4);
// the layer parts ask only gemm_precision() and Emitter::cast().
//
// FP8 (precision kFp8, Transformer Engine's recipes): the four linear GEMMs
// (QKV, output projection, FC1, FC2; forward, data and weight gradient) and
// the MoE experts' grouped GEMMs (Transformer Engine's grouped linear) run as
// FP8 GEMMs; attention, the router, logits, norms and activations stay bf16.
// Each such GEMM's input is cast to fp8 (fp8_cast_transpose) before its
// forward GEMM, and the gradient of its output before its backward GEMMs (4
// casts per dense layer each way). Layer weights are cast once per step
// after the optimizer (their fp8 copies are cached over the micro-batches;
// simulate_graph.cc times that cast with the optimizer step), at ZeRO-3 per
// layer after each gather (forward and backward; lowering.cc). Tensor-
// parallel collectives stay bf16.
//
// NVFP4 (precision kNvfp4, Transformer Engine's NVFP4BlockScaling recipe,
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
#ifndef LLMPLAN_SIMULATOR_LOWERING_PRECISION_H_
#define LLMPLAN_SIMULATOR_LOWERING_PRECISION_H_

#include "simulator/cost_model.h"
#include "simulator/plan.h"

namespace llmplan::simulator::lowering {

// The formats of one plan's kernels.
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
// the linear layers' (QKV, output projection, FC1, FC2) and the routed
// experts' grouped GEMMs.
bool runs_in_fp8(KernelKind kind);

// The precision a GEMM of `kind` runs in.
Precision gemm_precision(const NumberFormats& formats, KernelKind kind);

// FP8 / NVFP4 training: sets `desc` to the cast (fp8_cast_transpose kernel,
// looked up under the plan's low precision, the profile's key; both backward
// passes as kBackward) of `elements` elements in `pass` and returns true.
// Returns false in 16-bit training.
bool fp8_cast_kernel(const NumberFormats& formats, Pass pass, double elements, KernelDesc* desc);

}  // namespace llmplan::simulator::lowering

#endif  // LLMPLAN_SIMULATOR_LOWERING_PRECISION_H_

// Internal to the lowering: the number formats a plan's kernels run in, and
// the casts low-precision training adds around its GEMMs. FP8 today; a new
// format (NVFP4) is a new case here, not an edit of the layer parts, which
// ask only gemm_precision() and Emitter::cast().
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
#ifndef LLMPLAN_SIMULATOR_LOWERING_PRECISION_H_
#define LLMPLAN_SIMULATOR_LOWERING_PRECISION_H_

#include "simulator/cost_model.h"
#include "simulator/plan.h"

namespace llmplan::simulator::lowering {

// The formats of one plan's kernels.
struct NumberFormats {
  bool fp8 = false;                  // precision fp8 (linear and expert GEMMs in FP8)
  Precision p16 = Precision::kBf16;  // precision of everything else
  double cast_bytes = 4.0;           // fp8_cast_transpose bytes per element
};
NumberFormats number_formats(const Plan& plan);

// The GEMMs that run in FP8 in FP8 training: the linear layers' (QKV, output
// projection, FC1, FC2) and the routed experts' grouped GEMMs.
bool runs_in_fp8(KernelKind kind);

// The precision a GEMM of `kind` runs in.
Precision gemm_precision(const NumberFormats& formats, KernelKind kind);

// FP8 training: sets `desc` to the fp8_cast_transpose of `elements`
// elements in `pass` (looked up under fp8, the profile's key; both backward
// passes as kBackward) and returns true. Returns false otherwise.
bool fp8_cast_kernel(const NumberFormats& formats, Pass pass, double elements, KernelDesc* desc);

}  // namespace llmplan::simulator::lowering

#endif  // LLMPLAN_SIMULATOR_LOWERING_PRECISION_H_

// A layer kind (layer_kind.h): its parameters, checks and memory (the
// layers:: functions at the end) and its kernels:
// the Mamba-2 mixer block's core (layer_part.h) of
// hybrid models (Model::layer_pattern 'M'; Nemotron-H, Nemotron 3), from the
// in_proj input's cast to out_proj's tensor-parallel reduction.
//
// Megatron-Core's MambaMixer (megatron/core/ssm/mamba_mixer.py) with
// mamba_ssm's fused kernels, per TP rank (heads and groups split over t:
// in_proj column-parallel, out_proj row-parallel; sequence parallelism
// gathers before in_proj and reduce-scatters after out_proj, as attention):
//   in_proj GEMM [T, h] x [h, (2 d_inner + 2 G N + H)/t]       (z, x, B, C, dt)
//   conv1d: depthwise causal conv (kernel K) + SiLU over the x, B, C
//     channels C_conv = d_inner + 2 G N: reads and writes T C_conv/t bf16
//     (forward); reads x and dy, writes dx (backward)
//   SSD scan (mamba_chunk_scan_combined): forward FLOPs T x
//     Model::ssd_flops_per_token() / t (Dao & Gu 2024, section 6); bytes:
//     x, B, C, y in bf16 (2 (2 d_inner + 2 G N)), dt and its cumulative
//     decay in fp32 (8 H), and the fp32 chunk states (H P N per chunk of Q
//     tokens) written by the chunk-state kernel, read and written by the
//     state passing and read by the output kernel: 4 copies (the fused
//     kernel's byte floor, data/profiles/README.md). Backward: 2x the
//     forward's FLOPs and bytes (its kernels recompute the chunk states and
//     run each matmul's two gradients; the profile's convention).
//   gated RMSNorm: y * silu(z), normalised per group: reads y and z, writes
//     the out_proj input (forward); reads y, z, dout, writes dy, dz (backward)
//   out_proj GEMM [T, d_inner/t] x [d_inner/t, h], then the TP reduction.
// The conv and norm are memory-bound; the scan is the larger of its FLOPs
// at flash attention's efficiency and its bytes (roofline.cc).
// Not modelled: context parallelism for Mamba layers (validate(model, plan)
// rejects cp > 1 on a model with Mamba layers).
#ifndef LLMPLAN_SIMULATOR_LAYERS_MAMBA_H_
#define LLMPLAN_SIMULATOR_LAYERS_MAMBA_H_

#include <vector>

#include "simulator/layers/layer_part.h"
#include "simulator/layers/layer_kind.h"

namespace llmplan::simulator::lowering {

// The mixer of Mamba layers (LayerPartKind::kMamba).
class Mamba : public LayerPart {
 public:
  using LayerPart::LayerPart;

  void forward(std::vector<LoweredOp>* out, OpCategory cat) override;
  void backward(std::vector<LoweredOp>* out) override;

  // The scan's forward kernel on this rank (FLOPs and bytes), for tests.
  KernelDesc scan(Pass pass) const;
};

}  // namespace llmplan::simulator::lowering

namespace llmplan::simulator::layers {

// A Mamba-2 mixer's stored activations split by TP, per token of the rank:
// in_proj's output [z, x, B, C, dt] (kept for the conv1d and the gated
// norm), the conv1d output (the scan's x, B, C), the scan's output y (the
// gated norm's input), the fp32 dt and cumulative decay the scan saves
// (8 H), out_proj's input (`gemm_in` bytes per element).
double mamba_split_activation_bytes(const Model& model, double gemm_in);

// validate(Model)'s checks of the Mamba fields: in range when the model has
// Mamba layers (`has_mamba`), at their defaults otherwise.
Status validate_mamba(const Model& model, bool has_mamba);

}  // namespace llmplan::simulator::layers

#endif  // LLMPLAN_SIMULATOR_LAYERS_MAMBA_H_

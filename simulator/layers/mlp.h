// A layer kind (layer_kind.h): its parameters, checks and memory (the
// layers:: functions at the end) and its kernels:
// the dense MLP block's core (layer_part.h),
// tensor-parallel (column-parallel FC1, row-parallel FC2): FC1 to width f
// (2f for SwiGLU's gate and up projections), the activation (GeLU, or
// SwiGLU's SiLU x gate), FC2 back to h, then the TP reduction. The MoE
// block's shared experts are the same core of width shared x f_e (moe.h).
#ifndef LLMPLAN_SIMULATOR_LAYERS_MLP_H_
#define LLMPLAN_SIMULATOR_LAYERS_MLP_H_

#include <vector>

#include "simulator/layers/layer_part.h"
#include "simulator/layers/layer_kind.h"

namespace llmplan::simulator::lowering {

// The feed-forward block of dense layers (LayerPartKind::kDenseMlp).
class DenseMlp : public LayerPart {
 public:
  using LayerPart::LayerPart;

  // The layer's MLP: core_forward / core_backward of width Model::ffn_hidden().
  void forward(std::vector<LoweredOp>* out, OpCategory cat) override;
  void backward(std::vector<LoweredOp>* out) override;

  // The MLP of width `f` from its input's cast (and SP gather) to its
  // output's TP reduction, forward; and its backward, from the output
  // gradient's SP gather to the input gradient's reduction.
  void core_forward(std::vector<LoweredOp>* out, OpCategory cat, int f) const;
  void core_backward(std::vector<LoweredOp>* out, int f) const;
};

}  // namespace llmplan::simulator::lowering

namespace llmplan::simulator::layers {

// One MLP (or expert) of width f on hidden-wide rows: FC1 (2 h f for
// SwiGLU's gate and up projections), FC2, their biases with linear_bias.
int64_t mlp_parameters(const Model& model, int64_t f);

// FC1 output bytes per FFN unit: SwiGLU's two projections, GeLU's one.
double fc1_output_bytes(const Model& model);

// validate(Model)'s checks of Model::activation_clamp.
Status validate_activation_clamp(const Model& model);

}  // namespace llmplan::simulator::layers

#endif  // LLMPLAN_SIMULATOR_LAYERS_MLP_H_

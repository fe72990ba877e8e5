// Layer kinds: what each kind of layer (or block of a layer) is to the
// simulator, and how to add one. Start here.
//
// Every kind has its own pair of files, simulator/layers/<kind>.{h,cc},
// holding everything about it: its parameters, the checks of its Model
// fields, its stored activations and weight-gradient bytes, and its kernels
// (a lowering::LayerPart, layer_part.h). The built-in kinds:
//   attention.*     dense / grouped-query attention, windows, chunks, RoPE,
//                   context parallelism; a layer's two norms
//   mla.*           multi-head latent attention (Model::kv_lora_rank > 0)
//   mlp.*           the dense MLP (GeLU, SwiGLU, squared ReLU)
//   moe.*           mixture of experts: router, experts, latent MoE,
//                   all-to-all overlap
//   moe_dispatch.*  the flex (DeepEP) dispatcher's ranks and nodes per token
//   mamba.*         the Mamba-2 mixer of hybrid models (layer_pattern 'M')
//   embedding.*     the model's ends: embedding, final norm, logits, loss
// The rest of the simulator only sums over layers: model_size.cc the
// parameters and FLOPs, memory.cc / layer_memory.cc the memory, lowering.cc
// the kernels of a pipeline chunk.
//
// Adding a layer kind (a one-block layer of hybrid models: one character
// of Model::layer_pattern, as Mamba-2 is 'M'):
//   1. simulator/layers/<kind>.{h,cc} (listed in simulator/CMakeLists.txt):
//      a LayerPart subclass emitting the block's kernels between the norm
//      before it and the residual after it (the driver emits those), and a
//      function returning its LayerKindSpec below (its character, its
//      parameters, activation bytes, FLOPs, field checks and LayerPart).
//   2. One line registering it: its spec in the list of registry() in
//      layers/layer_kind.cc (with its header's #include there), or, for a
//      kind defined outside the simulator (a test, a plug-in linked into
//      the program), a namespace-scope LayerKindRegistration in its own .cc.
// Nothing else changes: validate(Model) admits its character and runs its
// checks, the parameter count, model FLOPs, stage memory (ZeRO units,
// pipeline stages, offloading, MTP blocks) and the lowering (bf16 layers,
// recomputation, ZeRO-3 gathers, tp_comm_overlap, zb-h1) take it from the
// spec. tests/simulator/layer_registry_test.cc adds a toy kind that way. A
// kind that needs Model fields of its own adds them to Model (model.h) and
// to the model JSON reader (model_json.cc).
//
// Also here: the helpers every kind's checks and formulas share.
#ifndef LLMPLAN_SIMULATOR_LAYERS_LAYER_KIND_H_
#define LLMPLAN_SIMULATOR_LAYERS_LAYER_KIND_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "simulator/model.h"
#include "simulator/plan.h"

namespace llmplan::simulator {

class CostModel;
struct Placement;
namespace lowering {
class LayerPart;
}  // namespace lowering

namespace layers {

// A layer kind added through the registry (see the file comment): one
// block of a hybrid model's layer, found by its character in
// Model::layer_pattern. Every function is required; each takes the model
// (validated but for `validate` itself) and the layer (0-based in the model).
struct LayerKindSpec {
  char symbol = 0;         // its character in Model::layer_pattern (not M, *, - or E)
  const char* name = "";   // for messages
  // The checks of the kind's Model fields, run by validate(Model) when the
  // layer pattern has the kind (after the layer pattern's own checks).
  Status (*validate)(const Model& model) = nullptr;
  // Trainable parameters of one layer of the kind, its pre-norm included
  // (split over the tensor-parallel ranks).
  int64_t (*parameters)(const Model& model, int layer) = nullptr;
  // Bytes it stores for its backward per micro-batch on one rank (as
  // hybrid_layer_activation_bytes, memory.h, without full recomputation).
  double (*activation_bytes)(const Model& model, const Plan& plan, int layer) = nullptr;
  // Forward matmul FLOPs per token (Model::model_flops_per_step).
  double (*flops_per_token)(const Model& model, int layer) = nullptr;
  // Its kernels: a LayerPart lowering the block's core (layer_part.h).
  std::unique_ptr<lowering::LayerPart> (*make_part)(const Model& model, const Plan& plan,
                                                    const Placement& placement,
                                                    const CostModel& cost) = nullptr;
};

// The registry holds no state a simulation can change: kinds are added
// while the program starts (static initialisation, one thread) and the
// registry is frozen at its first read (validate(Model), a simulation, the
// functions below), after which every thread reads the same kinds without
// locks and a registration fails its CHECK.

// Registers `spec`. REQUIRES: every function set, a symbol no other kind
// (built-in or registered) uses, the registry not yet read.
void register_layer_kind(const LayerKindSpec& spec);

// Registers its spec when constructed: a namespace-scope
//   const layers::LayerKindRegistration kToyKind({.symbol = 'Q', ...});
// in the kind's .cc adds the kind before main runs.
class LayerKindRegistration {
 public:
  explicit LayerKindRegistration(const LayerKindSpec& spec) { register_layer_kind(spec); }
};
// The registered kind of `symbol`, nullptr when none.
const LayerKindSpec* find_layer_kind(char symbol);
// Every registered kind, in registration order.
const std::vector<LayerKindSpec>& registered_layer_kinds();

// Whether `c` is a character of Model::layer_pattern: a built-in kind (M,
// *, - or E) or a registered one.
bool is_layer_symbol(char c);

// validate(Model)'s error for `field`: InvalidArgument "model.<field>: <why>".
Status bad_field(const char* field, const std::string& why);
// OK when lo <= v <= hi; otherwise bad_field naming the bound ("must not be
// negative" / "must be positive" below lo, "must be at most hi" above).
Status field_in_range(const char* field, int v, int lo, int hi);

// One pre-norm's parameters (RMSNorm: weight; LayerNorm with bias: 2h).
int64_t norm_parameters(const Model& model);

// Tokens of one micro-batch on this rank (s/cp of each sequence).
double rank_tokens(const Model& model, const Plan& plan);

}  // namespace layers
}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_LAYERS_LAYER_KIND_H_

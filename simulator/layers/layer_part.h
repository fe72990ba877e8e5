// Internal to the lowering: what a part of a transformer layer is to the
// driver (simulator/lowering.cc), and which parts each layer has.
//
// A layer is two pre-norm residual blocks: a token mixer (attention) and a
// feed-forward block (a dense MLP or a mixture of experts). The driver emits
// what every block has -- the norm before it, the dropout + residual after
// it, their backwards, full recomputation and ZeRO-3's fp8 weight casts --
// and asks the block's LayerPart for its core, from the input cast after
// the norm to the tensor-parallel reduction of its output.
//
// Each part is lowered by its layer kind's file (simulator/layers/<kind>.*).
// A new layer kind brings its LayerPart through its LayerKindSpec
// (layer_kind.h: the recipe); the driver holds one object per registered
// kind the model uses (LayerPartKind::kRegistered). Parts do not call each
// other (except through a part's own public helpers, as the MoE's shared
// experts use the dense MLP's core).
#ifndef LLMPLAN_SIMULATOR_LAYERS_LAYER_PART_H_
#define LLMPLAN_SIMULATOR_LAYERS_LAYER_PART_H_

#include <vector>

#include "simulator/lowering.h"
#include "simulator/lowering/emitter.h"

namespace llmplan::simulator::lowering {

// The kinds of layer parts, each lowered by one file.
enum class LayerPartKind {
  kAttention,  // layers/attention.h: dense, GQA, sliding window, context parallel
  kMla,        // layers/mla.h: multi-head latent attention (Model::kv_lora_rank > 0)
  kDenseMlp,   // layers/mlp.h: GeLU or SwiGLU MLP
  kMoe,        // layers/moe.h: router, all-to-alls, grouped expert GEMMs, shared experts
  kMamba,      // layers/mamba.h: Mamba-2 mixer (in_proj, conv1d, SSD scan, gated norm, out_proj)
  kRegistered, // a registered layer kind's part (layer_kind.h), by LayerKinds::symbol
};

// The parts of one layer, in order. A hybrid model's layer
// (Model::layer_pattern) is one block: a mixer only (has_feed_forward
// false) or a feed-forward block only (has_mixer false).
struct LayerKinds {
  LayerPartKind mixer = LayerPartKind::kAttention;
  LayerPartKind feed_forward = LayerPartKind::kDenseMlp;
  bool has_mixer = true, has_feed_forward = true;
  char symbol = 0;  // the registered kind of a kRegistered mixer (Model::layer_pattern)
};

// The core of one block of a layer (see the file comment), for the layer
// last given to begin_layer(). A part keeps what it accumulates over a
// chunk (e.g. collective time it hides); one object serves every layer of
// its kind in the chunk, one chunk at a time.
class LayerPart : public Emitter {
 public:
  using Emitter::Emitter;
  virtual ~LayerPart() = default;

  // Layer `layer` (0-based, in the model) is the next to be lowered.
  virtual void begin_layer(int layer) { (void)layer; }
  // The block's forward ops, in category `cat` (kRecompute when re-run).
  virtual void forward(std::vector<LoweredOp>* out, OpCategory cat) = 0;
  // The block's backward ops (input and weight gradients).
  virtual void backward(std::vector<LoweredOp>* out) = 0;
  // Context-parallel exchange time hidden under compute so far (attention's
  // ring; ChunkProgram::cp_hidden_s).
  virtual double cp_hidden_s() const { return 0; }
};

}  // namespace llmplan::simulator::lowering

#endif  // LLMPLAN_SIMULATOR_LAYERS_LAYER_PART_H_

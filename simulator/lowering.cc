#include "simulator/lowering.h"

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "simulator/layers/attention.h"
#include "simulator/layers/embedding.h"
#include "simulator/layers/layer_kind.h"
#include "simulator/layers/layer_part.h"
#include "simulator/layers/mamba.h"
#include "simulator/layers/mla.h"
#include "simulator/layers/mlp.h"
#include "simulator/layers/moe.h"
#include "simulator/lowering/passes.h"
#include "simulator/lowering/sharding.h"
#include "simulator/memory.h"

namespace llmplan::simulator {

const char* to_string(StreamKind s) {
  switch (s) {
    case StreamKind::kCompute: return "compute";
    case StreamKind::kTensorComm: return "tp-comm";
    case StreamKind::kPipeForward: return "pp-send-fwd";
    case StreamKind::kPipeBackward: return "pp-send-bwd";
    case StreamKind::kDataComm: return "dp-comm";
    case StreamKind::kContextComm: return "cp-comm";
    case StreamKind::kExpertComm: return "ep-comm";
  }
  return "?";
}

namespace {

using lowering::LayerPart;
using lowering::LayerPartKind;

// Which parts layer `layer` has (layers/layer_part.h): attention, then an
// MoE block on the layers Model::is_moe_layer picks, a dense MLP elsewhere.
// A hybrid model's layer (Model::layer_pattern) holds one of them, or a
// Mamba mixer.
lowering::LayerKinds layer_kinds(const Model& model, int layer) {
  lowering::LayerKinds kinds;
  kinds.mixer = model.is_mla() ? LayerPartKind::kMla : LayerPartKind::kAttention;
  kinds.feed_forward = model.is_moe_layer(layer) ? LayerPartKind::kMoe : LayerPartKind::kDenseMlp;
  switch (model.layer_kind(layer)) {
    case Model::LayerKind::kStandard: break;
    case Model::LayerKind::kMamba:
      kinds.mixer = LayerPartKind::kMamba;
      kinds.has_feed_forward = false;
      break;
    case Model::LayerKind::kAttention: kinds.has_feed_forward = false; break;
    case Model::LayerKind::kMlp:
    case Model::LayerKind::kMoe: kinds.has_mixer = false; break;
    case Model::LayerKind::kRegistered:
      kinds.mixer = LayerPartKind::kRegistered;
      kinds.symbol = model.layer_pattern[static_cast<size_t>(layer)];
      kinds.has_feed_forward = false;
      break;
  }
  return kinds;
}

// The part objects of one chunk, one per kind.
class LayerParts {
 public:
  LayerParts(const Model& model, const Plan& plan, const Placement& placement,
             const CostModel& cost)
      : attention_(model, plan, placement, cost),
        mla_(model, plan, placement, cost),
        mlp_(model, plan, placement, cost),
        moe_(model, plan, placement, cost),
        mamba_(model, plan, placement, cost) {
    // A part for each registered layer kind (layers/layer_kind.h) the model has.
    for (const layers::LayerKindSpec& kind : layers::registered_layer_kinds()) {
      if (model.layer_pattern.find(kind.symbol) != std::string::npos) {
        registered_.emplace_back(kind.symbol, kind.make_part(model, plan, placement, cost));
      }
    }
  }

  // The object that lowers the parts of `kind` (`symbol`: a registered
  // kind's): the one switch over kinds.
  LayerPart& part(LayerPartKind kind, char symbol) {
    switch (kind) {
      case LayerPartKind::kAttention: return attention_;
      case LayerPartKind::kMla: return mla_;
      case LayerPartKind::kDenseMlp: return mlp_;
      case LayerPartKind::kMoe: return moe_;
      case LayerPartKind::kMamba: return mamba_;
      case LayerPartKind::kRegistered:
        for (auto& [s, part] : registered_) {
          if (s == symbol) return *part;
        }
        break;
    }
    LLMPLAN_CHECK(false);  // not a LayerPartKind
    return attention_;
  }

  // Context-parallel exchange time the parts hid so far.
  double cp_hidden_s() const {
    double s = 0;
    for (const LayerPart* part : all()) s += part->cp_hidden_s();
    for (const auto& [symbol, part] : registered_) s += part->cp_hidden_s();
    return s;
  }

 private:
  // Every part object, for what the driver sums over them.
  std::array<const LayerPart*, 5> all() const {
    return {&attention_, &mla_, &mlp_, &moe_, &mamba_};
  }

  lowering::Attention attention_;
  lowering::Mla mla_;
  lowering::DenseMlp mlp_;
  lowering::Moe moe_;
  lowering::Mamba mamba_;
  std::vector<std::pair<char, std::unique_ptr<LayerPart>>> registered_;  // by symbol
};

// One layer as the driver lowers it: its parts and its parameters on this
// device, outside the routed experts (over t) and the routed experts' (over
// ep x etp).
struct Layer {
  LayerPart* mixer = nullptr;
  LayerPart* feed_forward = nullptr;
  bool moe = false;
  bool low_precision = false;  // GEMMs in the plan's fp8 / nvfp4 (not a bf16 layer)
  double parameters = 0, expert_parameters = 0;
};

// Lowers one chunk (lower_chunk): walks its layers and the model's ends in
// pass order, then applies the whole-pass transforms.
class ChunkLowerer {
 public:
  ChunkLowerer(const Model& model, const Plan& plan, const Placement& placement,
               const CostModel& cost, int chunk)
      : model_(model), plan_(plan), placement_(placement), cost_(cost),
        emit_(model, plan, placement, cost), ends_(model, plan, placement, cost),
        parts_(model, plan, placement, cost) {
    // The bf16 layers at the ends of a low-precision plan (Plan::
    // bf16_layers_at_start / _end) are lowered as in bf16 training.
    if (plan.has_bf16_layers()) {
      plan16_ = plan;
      plan16_.precision = Precision::kBf16;
      parts16_.emplace(model, plan16_, placement, cost);
    }
    const int chunks = plan.pipeline_parallel * plan.virtual_stages;
    first_ = chunk == 0;
    last_ = chunk == chunks - 1;
    grad_elem_ = plan.grad_reduce_bytes();
    prog_.chunk = chunk;
    prog_.layers = layers_in_chunk(model, plan, chunk);
    // The chunk's first layer in the model: chunks hold consecutive layers.
    for (int j = 0; j < chunk; ++j) first_layer_ += layers_in_chunk(model, plan, j);
  }

  ChunkProgram lower() {
    count_parameters();
    lower_forward();
    lower_backward();
    prog_.cp_hidden_s = parts_.cp_hidden_s() + (parts16_ ? parts16_->cp_hidden_s() : 0.0);
    // Split backward (zb-h1): B and W cut from the raw backward, then lowered
    // like the other passes.
    prog_.split_backward = plan_.schedule == Schedule::kZbH1;
    if (prog_.split_backward) lowering::split_backward(&prog_, &units_);
    lowering::overlap_tp(plan_, cost_, &prog_);
    lowering::shard_passes(plan_, placement_, cost_, units_, &prog_);
    lowering::queue_launches(cost_, &prog_);
    return std::move(prog_);
  }

 private:
  // Layer `layer` of the model with its parts told it is next.
  Layer begin_layer(int layer) {
    const lowering::LayerKinds kinds = layer_kinds(model_, layer);
    Layer out;
    out.low_precision = plan_.low_precision_layer(layer, model_.num_layers);
    LayerParts& parts = parts16_ && !out.low_precision ? *parts16_ : parts_;
    if (kinds.has_mixer) out.mixer = &parts.part(kinds.mixer, kinds.symbol);
    if (kinds.has_feed_forward) out.feed_forward = &parts.part(kinds.feed_forward, kinds.symbol);
    if (out.mixer) out.mixer->begin_layer(layer);
    if (out.feed_forward) out.feed_forward->begin_layer(layer);
    out.moe = kinds.has_feed_forward && kinds.feed_forward == LayerPartKind::kMoe;
    if (!out.moe) {
      out.parameters = per_rank(static_cast<double>(model_.layer_parameters(layer)));
    } else {
      const double experts = static_cast<double>(model_.expert_parameters_per_layer());
      // Latent MoE's projections are duplicated on every TP rank.
      const double latent = static_cast<double>(model_.moe_latent_parameters());
      out.parameters =
          per_rank(static_cast<double>(model_.layer_parameters(layer)) - experts - latent) + latent;
      out.expert_parameters =
          experts / (static_cast<double>(plan_.expert_parallel) * plan_.expert_tensor_parallel);
    }
    return out;
  }

  // A layer's `params` (outside the routed experts) on one TP rank: split
  // over t but for MLA's duplicated down-projections and latent norms.
  double per_rank(double params) const {
    const double replicated = static_cast<double>(model_.mla_replicated_parameters());
    return (params - replicated) / plan_.tensor_parallel + replicated;
  }

  // The parameters this device holds for the chunk, and their gradient bytes.
  void count_parameters() {
    if (first_) embedding_params_ = lowering::embedding_parameters(model_, plan_);
    if (last_) head_params_ = lowering::head_parameters(model_, plan_);
    if (last_) mtp_params_ = lowering::mtp_input_parameters(model_, plan_);
    if (!model_.is_moe() && !model_.is_hybrid()) {
      const double layer_params = per_rank(model_.layer_parameters());
      int low = prog_.layers;
      if (plan_.has_bf16_layers()) {
        low = 0;
        for (int l = 0; l < prog_.layers; ++l) {
          low += plan_.low_precision_layer(first_layer_ + l, model_.num_layers) ? 1 : 0;
        }
      }
      prog_.layer_parameters =
          model_.is_mla() ? low * layer_params
                          : low * static_cast<double>(model_.layer_parameters()) / plan_.tensor_parallel;
      prog_.parameters = prog_.layers * layer_params + embedding_params_ + head_params_;
    } else {
      // Dense layers as above (a hybrid model's layers each by its kind); an
      // MoE layer's routed experts over ep x etp.
      double dense = 0, experts = 0, low = 0;
      for (int l = 0; l < prog_.layers; ++l) {
        const Layer layer = begin_layer(first_layer_ + l);
        dense += layer.parameters;
        if (layer.moe) experts += layer.expert_parameters;
        if (layer.low_precision || !plan_.has_bf16_layers()) {
          low += layer.parameters + (layer.moe ? layer.expert_parameters : 0.0);
        }
      }
      prog_.layer_parameters = low;
      prog_.expert_parameters = experts;
      prog_.parameters = dense + experts + embedding_params_ + head_params_;
    }
    // The MTP modules (last chunk): their decoder blocks and inputs, once
    // per module with its own weights (Model::mtp_weight_copies()).
    if (last_ && model_.mtp_layers > 0) {
      const double n = model_.mtp_weight_copies();
      prog_.parameters += mtp_params_;
      for (const int i : model_.mtp_block_layers()) {
        const Layer layer = begin_layer(i);
        prog_.parameters += n * (layer.parameters + layer.expert_parameters);
        prog_.expert_parameters += n * layer.expert_parameters;
        if (layer.low_precision || !plan_.has_bf16_layers()) {
          prog_.layer_parameters += n * (layer.parameters + layer.expert_parameters);
        }
      }
    }
    prog_.grad_bytes = (prog_.parameters - prog_.expert_parameters) * grad_elem_;
    prog_.expert_grad_bytes = prog_.expert_parameters * grad_elem_;
    act_bytes_ = emit_.tokens() * model_.hidden_size * lowering::kElem;
    // With sequence parallelism (or Megatron's scatter/gather) a stage sends
    // only its 1/t slice of the activation.
    const int t = plan_.tensor_parallel;
    const bool sliced = t > 1 && (plan_.sequence_parallel || plan_.pipeline_scatter_gather);
    prog_.activation_send_bytes = sliced ? act_bytes_ / t : act_bytes_;
  }

  // Megatron's scatter/gather without SP: the stage's input arrives as 1/t
  // slices, all-gathered over TP before the pass.
  bool gathers_input(bool end_stage) const {
    return plan_.pipeline_scatter_gather && !end_stage && plan_.tensor_parallel > 1 &&
           !plan_.sequence_parallel;
  }

  // A unit of the pass `ops` (ZeRO-2/3): the ops from `begin` to the end.
  static void add_unit(std::vector<lowering::Unit>* units, const std::vector<LoweredOp>& ops,
                       size_t begin, double params, double expert_params = 0) {
    units->push_back({begin, ops.size(), params, expert_params});
  }

  // What `emit` appends to `out`, as one unit of `units` holding `params`.
  template <typename Emit>
  static void lower_unit(std::vector<LoweredOp>* out, std::vector<lowering::Unit>* units,
                         double params, Emit emit) {
    const size_t b = out->size();
    emit();
    add_unit(units, *out, b, params);
  }

  void lower_forward() {
    std::vector<LoweredOp>* out = &prog_.forward;
    std::vector<lowering::Unit>* units = &units_.forward;
    emit_.overhead(out);
    if (gathers_input(first_)) emit_.tp(out, CollectiveKind::kAllGather, act_bytes_);
    if (first_) lower_unit(out, units, embedding_params_, [&] { ends_.embedding_forward(out); });
    for (int l = 0; l < prog_.layers; ++l) lower_layer(l, /*forward=*/true);
    if (last_) {
      for (int k = 0; k < model_.mtp_layers; ++k) lower_mtp(k, /*forward=*/true);
    }
    if (last_) lower_unit(out, units, head_params_, [&] { ends_.head_forward(out); });
  }

  // The backward, in reverse order.
  void lower_backward() {
    std::vector<LoweredOp>* out = &prog_.backward;
    std::vector<lowering::Unit>* units = &units_.backward;
    emit_.overhead(out);
    if (gathers_input(last_)) emit_.tp(out, CollectiveKind::kAllGather, act_bytes_);
    if (last_) {
      lower_unit(out, units, head_params_,
                 [&] { ends_.head_backward(out, head_params_ * grad_elem_); });
      for (int k = model_.mtp_layers - 1; k >= 0; --k) lower_mtp(k, /*forward=*/false);
    }
    for (int l = prog_.layers - 1; l >= 0; --l) lower_layer(l, /*forward=*/false);
    if (first_) {
      lower_unit(out, units, embedding_params_,
                 [&] { ends_.embedding_backward(out, embedding_params_ * grad_elem_); });
    }
  }

  // Layer l of the chunk into its forward or backward pass, as one unit;
  // with moe_a2a_overlap an MoE layer's all-to-alls hidden under its compute.
  void lower_layer(int l, bool forward) {
    std::vector<LoweredOp>* out = forward ? &prog_.forward : &prog_.backward;
    const size_t b = out->size();
    const Layer layer = begin_layer(first_layer_ + l);
    lower_block_layer(layer, forward, /*owns_gradients=*/true, out);
    if (first_layer_ + l < plan_.cpu_offload_layers) offload_wait(first_layer_ + l, b, out);
    add_unit(forward ? &units_.forward : &units_.backward, *out, b, layer.parameters,
             layer.expert_parameters);
  }

  // One layer's forward or backward, its all-to-alls overlapped as above.
  void lower_block_layer(const Layer& layer, bool forward, bool owns_gradients,
                         std::vector<LoweredOp>* out) {
    const size_t b = out->size();
    if (forward) {
      layer_forward(layer, out, OpCategory::kCompute);
    } else {
      layer_backward(layer, out, owns_gradients);
    }
    if (plan_.moe_a2a_overlap && model_.is_moe() && layer.moe) {
      prog_.moe_a2a_hidden_s += lowering::overlap_a2a(cost_.comm_compute_slowdown(), b, out);
    }
  }

  // MTP module k (Model::mtp_layers) on the last chunk, one unit: its input,
  // its decoder block (Model::mtp_block_layers()), its logits and loss
  // (forward; reversed in the backward). With shared weights
  // (Model::mtp_shared_weights) the compute is every module's but the
  // weights and their gradients belong to module 0's unit alone: its
  // backward runs last, so the summed gradients are final after it.
  void lower_mtp(int k, bool forward) {
    std::vector<LoweredOp>* out = forward ? &prog_.forward : &prog_.backward;
    const size_t b = out->size();
    const bool owns = !model_.mtp_shared_weights || k == 0;
    const double input_params = owns ? mtp_params_ / model_.mtp_weight_copies() : 0.0;
    std::vector<int> block = model_.mtp_block_layers();
    double params = input_params, expert_params = 0;
    if (forward) {
      ends_.mtp_input_forward(out);
    } else {
      ends_.head_backward(out, 0.0);  // the shared head's gradient: the main head's
      std::reverse(block.begin(), block.end());
    }
    for (const int i : block) {
      const Layer layer = begin_layer(i);
      lower_block_layer(layer, forward, owns, out);
      if (owns) {
        params += layer.parameters;
        expert_params += layer.expert_parameters;
      }
    }
    if (forward) {
      ends_.head_forward(out);
    } else {
      ends_.mtp_input_backward(out, input_params * grad_elem_);
    }
    add_unit(forward ? &units_.forward : &units_.backward, *out, b, params, expert_params);
  }

  // Activation CPU offloading (Plan::cpu_offload_layers) of model layer
  // `layer`, whose pass ops start at out[begin]: Transformer Engine's offload
  // handler copies the layer's stored activations to the host on a stream
  // of its own after the layer's forward and makes the next layer's end wait
  // for the copy; in the backward it prefetches the layer back during the
  // backward of the layer after it and waits before its own. Each copy thus
  // overlaps about one layer's pass (the layers are alike): the copy's
  // time beyond this layer's pass time is exposed on the compute stream.
  // The copy runs over Cluster::host_link_bytes_per_s (Placement) and uses
  // no SMs (a copy engine).
  void offload_wait(int layer, size_t begin, std::vector<LoweredOp>* out) {
    const bool moe = model_.is_moe_layer(layer);
    const Plan& layer_plan =
        plan_.has_bf16_layers() && !plan_.low_precision_layer(layer, model_.num_layers) ? plan16_
                                                                                       : plan_;
    const double bytes = model_.is_hybrid() ? hybrid_layer_activation_bytes(model_, layer_plan, layer)
                         : moe              ? moe_layer_activation_bytes(model_, layer_plan)
                                            : layer_activation_bytes(model_, layer_plan);
    double pass_s = 0;
    for (size_t i = begin; i < out->size(); ++i) {
      if ((*out)[i].stream == StreamKind::kCompute) pass_s += (*out)[i].duration_s;
    }
    const double copy_s = bytes / placement_.host_link_bytes_per_s;
    if (copy_s <= pass_s) return;
    LoweredOp op;
    op.stream = StreamKind::kCompute;
    op.category = OpCategory::kCpuOffload;
    op.duration_s = copy_s - pass_s;
    op.name = "cpu offload wait";
    out->push_back(op);
  }

  // A layer's forward: two pre-norm residual blocks (layers/layer_part.h),
  // its mixer's and its feed-forward block's. With ZeRO-3 in FP8 the
  // gathered weights of the layer are cast once after the first norm.
  void layer_forward(const Layer& layer, std::vector<LoweredOp>* out, OpCategory cat) {
    const Pass f = Pass::kForward;
    emit_.layer_norm(out, f, cat);
    if (plan_.sharding_stage() >= 3 && layer.low_precision) {
      emit_.cast(out, f, layer.parameters + layer.expert_parameters, cat);
    }
    // A hybrid layer's one block (the norm above is its own).
    if (layer.mixer) {
      layer.mixer->forward(out, cat);
      emit_.dropout_residual(out, f, cat);
    }
    if (layer.feed_forward) {
      if (layer.mixer) emit_.layer_norm(out, f, cat);
      layer.feed_forward->forward(out, cat);
      emit_.dropout_residual(out, f, cat);
    }
  }

  // A layer's backward, with its recomputation: the blocks in reverse. The
  // layer's gradients (over Placement::data; routed experts' over
  // Placement::expert_data) are final after its last op, unless
  // owns_gradients is false (a shared-weight MTP module other than the
  // last to run backward).
  void layer_backward(const Layer& layer, std::vector<LoweredOp>* out, bool owns_gradients) {
    const Pass b = Pass::kBackward;
    const OpCategory c = OpCategory::kCompute;
    if (plan_.recompute == Recompute::kFull) layer_forward(layer, out, OpCategory::kRecompute);
    if (plan_.sharding_stage() >= 3 && layer.low_precision) {
      emit_.cast(out, b, layer.parameters + layer.expert_parameters, c);
    }
    if (layer.feed_forward) {
      emit_.dropout_residual(out, b, c);
      // Plan::recompute_modules layernorm: the MoE block's norm runs again
      // to rebuild the router's input before the block's backward.
      if (layer.moe && plan_.recomputes(kRecomputeLayernorm)) {
        emit_.layer_norm(out, Pass::kForward, OpCategory::kRecompute);
      }
      layer.feed_forward->backward(out);
      emit_.layer_norm(out, b, c);
    }
    if (layer.mixer) {
      emit_.dropout_residual(out, b, c);
      layer.mixer->backward(out);
      emit_.layer_norm(out, b, c);
    }
    if (!owns_gradients) return;
    out->back().grad_ready_bytes += layer.parameters * grad_elem_;
    out->back().expert_grad_ready_bytes += layer.expert_parameters * grad_elem_;
  }

  const Model& model_;
  const Plan& plan_;
  const Placement& placement_;
  const CostModel& cost_;
  lowering::Emitter emit_;             // the blocks' norms and residuals, host overhead
  lowering::EmbeddingAndHead ends_;    // the first chunk's embedding, the last one's head
  LayerParts parts_;
  Plan plan16_;                          // the plan in bf16, for parts16_
  std::optional<LayerParts> parts16_;    // the bf16 layers' parts (has_bf16_layers())
  bool first_ = false, last_ = false;  // the model's first / last chunk
  int first_layer_ = 0;                // the chunk's first layer in the model
  double grad_elem_ = 0;               // gradient bytes per parameter
  double embedding_params_ = 0, head_params_ = 0;
  double mtp_params_ = 0;              // the MTP modules' inputs (lowering::mtp_input_parameters)
  double act_bytes_ = 0;               // the activation of a micro-batch on this rank
  ChunkProgram prog_;
  lowering::PassUnits units_;          // as emitted, for ZeRO-2/3 and the split backward
};

}  // namespace

ChunkProgram lower_chunk(const Model& model, const Plan& plan, const Placement& placement,
                         const CostModel& cost, int chunk) {
  const int chunks = plan.pipeline_parallel * plan.virtual_stages;
  LLMPLAN_CHECK(chunk >= 0 && chunk < chunks);
  return ChunkLowerer(model, plan, placement, cost, chunk).lower();
}

std::vector<const ChunkProgram*> lower_plan_chunks(const Model& model, const Plan& plan,
                                                   const Placement& placement,
                                                   const CostModel& cost,
                                                   std::vector<ChunkProgram>* out) {
  LLMPLAN_CHECK(out->empty());
  const int p = plan.pipeline_parallel, v = plan.virtual_stages;
  std::vector<ChunkProgram>& unique = *out;
  unique.reserve(4);
  std::vector<const ChunkProgram*> programs(p * v, nullptr);
  std::vector<int> unique_of(p * v, -1);
  // With MoE, windowed or chunked layers, or bf16 layers in a low-precision plan, the
  // chunks' layers must also be of the same kinds (MoE or dense, attention
  // span, precision), layer by layer.
  const bool mixed_layers = model.is_moe() || model.sliding_window > 0 ||
                            model.attention_chunk > 0 || plan.has_bf16_layers();
  std::vector<int> first_layer(p * v + 1, 0);
  for (int j = 0; j < p * v; ++j)
    first_layer[j + 1] = first_layer[j] + layers_in_chunk(model, plan, j);
  auto same_kinds = [&](int j, int k) {
    if (!mixed_layers) return true;
    for (int l = 0; l < first_layer[j + 1] - first_layer[j]; ++l) {
      const int a = first_layer[j] + l, b = first_layer[k] + l;
      if (model.is_moe_layer(a) != model.is_moe_layer(b) ||
          model.attention_span(a) != model.attention_span(b) ||
          plan.low_precision_layer(a, model.num_layers) !=
              plan.low_precision_layer(b, model.num_layers)) {
        return false;
      }
    }
    return true;
  };
  for (int j = 0; j < p * v; ++j) {
    const bool middle = j > 0 && j < p * v - 1;
    const int layers = layers_in_chunk(model, plan, j);
    for (size_t u = 0; middle && u < unique.size() && unique_of[j] < 0; ++u) {
      const int k = unique[u].chunk;
      if (k > 0 && k < p * v - 1 && unique[u].layers == layers && same_kinds(j, k)) {
        unique_of[j] = static_cast<int>(u);
      }
    }
    if (unique_of[j] < 0) {
      unique_of[j] = static_cast<int>(unique.size());
      unique.push_back(lower_chunk(model, plan, placement, cost, j));
    }
  }
  for (int j = 0; j < p * v; ++j) programs[j] = &unique[unique_of[j]];
  return programs;
}

double pipeline_transfer_s(const ChunkProgram& prog, const Placement& placement,
                           const CostModel& cost, int boundary) {
  CollectiveDesc c;
  c.kind = CollectiveKind::kSendRecv;
  c.bytes = prog.activation_send_bytes;
  c.group = {2, placement.pipe_crosses_node[boundary] ? 1 : 2};
  return cost.collective_time_s(c);
}

}  // namespace llmplan::simulator

#include "simulator/model.h"

#include <algorithm>
#include <string>
#include <string_view>

namespace llmplan::simulator {

namespace {

// MLA's projections and latent norms (Model::q_lora_rank ...): q down +
// norm + up (or the direct q projection), kv down (latent + rotary key) +
// norm + up, output projection. No biases (validate() refuses linear_bias).
int64_t mla_attention(const Model& m) {
  const int64_t h = m.hidden_size, a = m.num_heads;
  const int64_t ql = m.q_lora_rank, kvl = m.kv_lora_rank;
  const int64_t qk = m.mla_qk_head_dim(), v = m.v_head_dim;
  const int64_t q = ql > 0 ? h * ql + ql + ql * a * qk : h * a * qk;
  const int64_t kv = h * (kvl + m.qk_rope_head_dim) + kvl + kvl * a * (m.qk_nope_head_dim + v);
  return q + kv + a * v * h;
}

// Attention (QKV, output projection, their biases) and the two norms of a layer.
int64_t attention_and_norms(const Model& m) {
  const int64_t h = m.hidden_size;
  if (m.is_mla()) return mla_attention(m) + 2 * h;
  const int64_t d = m.head_dim();
  const int64_t q = static_cast<int64_t>(m.num_heads) * d;
  const int64_t kv = static_cast<int64_t>(m.kv_heads()) * d;
  const int64_t bias = m.linear_bias ? 1 : 0;
  const int64_t attn = h * (q + 2 * kv) + q * h + bias * (q + 2 * kv + h);
  const int64_t norms = 2 * (m.linear_bias ? 2 * h : h);
  return attn + norms;
}

// One MLP (or expert) of width f.
int64_t mlp_parameters(const Model& m, int64_t f) {
  const int64_t h = m.hidden_size;
  const int64_t bias = m.linear_bias ? 1 : 0;
  return m.activation == Activation::kSwiglu ? 3 * h * f + bias * (2 * f + h)
                                             : 2 * h * f + bias * (f + h);
}

// One routed expert: an MLP of width f_e on moe_routed_width()-wide rows.
int64_t expert_parameters(const Model& m) {
  const int64_t w = m.moe_routed_width(), f = m.moe_ffn_hidden();
  const int64_t bias = m.linear_bias ? 1 : 0;
  return m.activation == Activation::kSwiglu ? 3 * w * f + bias * (2 * f + w)
                                             : 2 * w * f + bias * (f + w);
}

// An MoE layer without its routed experts: attention, norms, router, shared
// experts, latent projections.
int64_t moe_layer_dense_part(const Model& m) {
  const int64_t h = m.hidden_size, e = m.num_experts;
  const int64_t router = h * e + (m.linear_bias ? e : 0);
  return attention_and_norms(m) + router +
         static_cast<int64_t>(m.moe_shared_experts) * mlp_parameters(m, m.moe_ffn_hidden()) +
         m.moe_latent_parameters();
}

// One pre-norm's parameters (RMSNorm: weight; LayerNorm with bias: 2h).
int64_t norm_parameters(const Model& m) { return m.linear_bias ? 2LL * m.hidden_size : m.hidden_size; }

}  // namespace

Model::LayerKind Model::layer_kind(int layer) const {
  if (!is_hybrid()) return LayerKind::kStandard;
  switch (layer_pattern[static_cast<size_t>(layer)]) {
    case 'M': return LayerKind::kMamba;
    case '*': return LayerKind::kAttention;
    case '-': return LayerKind::kMlp;
    default: return LayerKind::kMoe;  // 'E' (validate() admits nothing else)
  }
}

int64_t Model::mamba_layer_parameters() const {
  const int64_t h = hidden_size, di = mamba_inner(), heads = mamba_heads;
  // Megatron-Core MambaMixer: in_proj and out_proj without bias, conv1d with
  // bias (conv_bias=True), dt_bias, A_log and D per head (D_has_hdim False),
  // the RMSNormGated weight over d_inner.
  return norm_parameters(*this) + h * mamba_in_proj_columns() +
         static_cast<int64_t>(mamba_conv_channels()) * (mamba_conv_kernel + 1) + 3 * heads + di +
         di * h;
}

double Model::ssd_flops_per_token() const {
  const double Q = mamba_chunk_size, N = mamba_state_dim, P = mamba_head_dim;
  const double H = mamba_heads, G = mamba_groups;
  return 2.0 * (Q * N * G + Q * P * H + 2.0 * N * P * H);
}

int64_t Model::layer_parameters() const {
  return attention_and_norms(*this) + mlp_parameters(*this, ffn_hidden());
}

int64_t Model::expert_parameters_per_layer() const {
  return static_cast<int64_t>(num_experts) * expert_parameters(*this);
}

int64_t Model::moe_latent_parameters() const {
  if (moe_latent_size <= 0) return 0;
  const int64_t h = hidden_size, l = moe_latent_size;
  return 2 * h * l + (linear_bias ? l + h : 0);
}

int64_t Model::moe_layer_parameters() const {
  return moe_layer_dense_part(*this) + expert_parameters_per_layer();
}

int64_t Model::layer_parameters(int layer) const {
  // A hybrid layer is one block: its part of a standard layer plus one norm.
  switch (layer_kind(layer)) {
    case LayerKind::kStandard: break;
    case LayerKind::kMamba: return mamba_layer_parameters();
    case LayerKind::kAttention: return attention_and_norms(*this) - norm_parameters(*this);
    case LayerKind::kMlp: return norm_parameters(*this) + mlp_parameters(*this, ffn_hidden());
    case LayerKind::kMoe:
      return moe_layer_parameters() - attention_and_norms(*this) + norm_parameters(*this);
  }
  return is_moe_layer(layer) ? moe_layer_parameters() : layer_parameters();
}

int Model::chunked_span() const {
  if (attention_chunk <= 0 || attention_chunk >= seq_length) return seq_length;
  const int64_t c = attention_chunk, s = seq_length;
  const int64_t full = s / c, rest = s % c;
  const int64_t pairs = full * c * c + rest * rest;
  return static_cast<int>((pairs + s / 2) / s);
}

int Model::num_moe_layers() const {
  if (is_hybrid()) {
    return is_moe() ? static_cast<int>(std::count(layer_pattern.begin(), layer_pattern.end(), 'E')) : 0;
  }
  if (!is_moe() || num_layers <= moe_first_dense) return 0;
  return (num_layers - moe_first_dense + moe_layer_every - 1) / moe_layer_every;
}

int64_t Model::embedding_parameters() const {
  int64_t p = static_cast<int64_t>(vocab_size) * hidden_size;
  if (positions == PositionEmbedding::kLearned) p += static_cast<int64_t>(seq_length) * hidden_size;
  return p;
}

int64_t Model::head_parameters() const {
  int64_t p = linear_bias ? 2LL * hidden_size : hidden_size;  // final norm
  if (!tied_embeddings) p += static_cast<int64_t>(vocab_size) * hidden_size;
  return p;
}

int Model::mtp_layer_like() const {
  for (int i = num_layers - 1; i > 0; --i) {
    if (is_moe_layer(i) == is_moe()) return i;
  }
  return 0;
}

std::vector<int> Model::mtp_block_layers() const {
  if (mtp_layer_pattern.empty() || !is_hybrid()) return {mtp_layer_like()};
  std::vector<int> out;
  for (const char c : mtp_layer_pattern) {
    const size_t at = layer_pattern.rfind(c);
    out.push_back(at == std::string::npos ? mtp_layer_like() : static_cast<int>(at));
  }
  return out;
}

int Model::mtp_block_moe_layers() const {
  int n = 0;
  for (const int i : mtp_block_layers()) n += is_moe_layer(i) ? 1 : 0;
  return n;
}

int64_t Model::mla_replicated_parameters() const {
  if (!is_mla()) return 0;
  const int64_t h = hidden_size;
  const int64_t q = q_lora_rank > 0 ? h * q_lora_rank + q_lora_rank : 0;
  return q + h * (kv_lora_rank + qk_rope_head_dim) + kv_lora_rank;
}

int64_t Model::mtp_parameters() const {
  const int64_t h = hidden_size;
  int64_t block = 0;
  for (const int i : mtp_block_layers()) block += layer_parameters(i);
  return static_cast<int64_t>(mtp_weight_copies()) * (3 * h + 2 * h * h + block);
}

int64_t Model::parameter_count() const {
  if (is_hybrid()) {
    int64_t p = embedding_parameters() + head_parameters();
    for (int i = 0; i < num_layers; ++i) p += layer_parameters(i);
    return p + mtp_parameters();
  }
  const int64_t moe = num_moe_layers();
  return (num_layers - moe) * layer_parameters() + moe * moe_layer_parameters() +
         embedding_parameters() + head_parameters() + mtp_parameters();
}

int64_t Model::active_parameter_count() const {
  // MTP modules: their MoE layers, once per module with its own weights.
  const int64_t moe =
      num_moe_layers() + static_cast<int64_t>(mtp_weight_copies()) * mtp_block_moe_layers();
  const int64_t idle =
      is_moe() ? static_cast<int64_t>(num_experts - moe_top_k) * expert_parameters(*this) : 0;
  return parameter_count() - moe * idle;
}

double Model::model_flops_per_step(int64_t global_batch) const {
  const double B = static_cast<double>(global_batch);
  const double s = seq_length, h = hidden_size, V = vocab_size;
  const double d = head_dim();
  const double q = num_heads * d, kv = kv_heads() * d, f = ffn_hidden();
  const double mlp_mats = activation == Activation::kSwiglu ? 3.0 : 2.0;
  // Forward matmul FLOPs per token per layer: QKV, attention (QK^T and AV
  // over the layer's span), output projection, MLP (dense) or router + the
  // top_k and shared experts (MoE).
  const double projections = 2.0 * h * (q + 2 * kv) + 2.0 * q * h;
  const double dense_mlp = 2.0 * mlp_mats * h * f;
  // Latent MoE: the routed experts on L-wide rows and the two [h <-> L]
  // projections; the shared experts on h.
  const double w = moe_routed_width();
  const double moe_mlp =
      is_moe() ? 2.0 * h * num_experts +
                     2.0 * mlp_mats * moe_ffn_hidden() * (w * moe_top_k + h * moe_shared_experts) +
                     2.0 * 2.0 * h * moe_latent_size
               : 0.0;
  // MLA (NeMo's deepseekv3 formula, see model.h): the projections' weights
  // (latent norms excluded) x 2, the core over half the pairs, no router.
  const double mla_projections =
      is_mla() ? 2.0 * static_cast<double>(mla_attention(*this) - q_lora_rank - kv_lora_rank)
               : 0.0;
  const double mla_core_per_key =
      static_cast<double>(num_heads) * (mla_qk_head_dim() + v_head_dim);
  const double router = is_mla() ? 0.0 : 2.0 * h * num_experts;
  const double moe_mlp_mla = is_moe() ? moe_mlp - 2.0 * h * num_experts + router : 0.0;
  auto attention_flops = [&](int i) {
    if (is_mla()) return mla_projections + attention_span(i) * mla_core_per_key;
    return projections + 2.0 * 2.0 * attention_span(i) * q;
  };
  // A standard layer: attention and its feed-forward block.
  auto layer_flops = [&](int i) {
    return attention_flops(i) + (is_moe_layer(i) ? moe_mlp_mla : dense_mlp);
  };
  // Hybrid layers: one block each; a Mamba layer's in_proj, out_proj and
  // SSD matmuls (the conv1d and gating are not matmuls).
  const double mamba = is_hybrid() ? 2.0 * h * mamba_in_proj_columns() +
                                         2.0 * mamba_inner() * h + ssd_flops_per_token()
                                   : 0.0;
  // Layer i's forward FLOPs per token, by its kind.
  auto any_layer_flops = [&](int i) {
    switch (layer_kind(i)) {
      case LayerKind::kStandard: break;
      case LayerKind::kMamba: return mamba;
      case LayerKind::kAttention: return attention_flops(i);
      case LayerKind::kMlp: return dense_mlp;
      case LayerKind::kMoe: return moe_mlp_mla;
    }
    return layer_flops(i);
  };
  double per_token = 0;
  for (int i = 0; i < num_layers; ++i) per_token += any_layer_flops(i);
  const double logits = 2.0 * h * V;
  // MTP modules, every depth (shared weights or not): the [2h -> h]
  // projection, the decoder block, the logits.
  double block = 0;
  for (const int i : mtp_block_layers()) block += any_layer_flops(i);
  const double mtp = mtp_layers * (2.0 * 2.0 * h * h + block + logits);
  return 3.0 * B * s * (per_token + logits + mtp);  // forward + 2x backward
}

Status validate(const Model& m) {
  auto bad = [](const char* field, const std::string& why) {
    return Status::invalid_argument(std::string("model.") + field + ": " + why);
  };
  // A count in [lo, hi]; the message names the field and the bound.
  auto in_range = [&](const char* field, int v, int lo, int hi) {
    if (v < lo) {
      return bad(field, std::string(lo == 0 ? "must not be negative" : "must be positive") +
                            ", got " + std::to_string(v));
    }
    if (v > hi) {
      return bad(field, "must be at most " + std::to_string(hi) + ", got " + std::to_string(v));
    }
    return Status();
  };
  LLMPLAN_RETURN_IF_ERROR(in_range("layers", m.num_layers, 1, Model::kMaxLayers));
  LLMPLAN_RETURN_IF_ERROR(in_range("hidden", m.hidden_size, 1, Model::kMaxHidden));
  LLMPLAN_RETURN_IF_ERROR(in_range("heads", m.num_heads, 1, Model::kMaxHidden));
  LLMPLAN_RETURN_IF_ERROR(in_range("kv_heads", m.num_kv_heads, 0, Model::kMaxHidden));
  LLMPLAN_RETURN_IF_ERROR(in_range("ffn_hidden", m.ffn_hidden_size, 0, Model::kMaxFfnHidden));
  LLMPLAN_RETURN_IF_ERROR(in_range("seq", m.seq_length, 1, Model::kMaxSeqLength));
  LLMPLAN_RETURN_IF_ERROR(in_range("vocab", m.vocab_size, 1, Model::kMaxVocab));
  LLMPLAN_RETURN_IF_ERROR(in_range("head_dim", m.head_dim_size, 0, Model::kMaxHidden));
  LLMPLAN_RETURN_IF_ERROR(in_range("sliding_window", m.sliding_window, 0, Model::kMaxSeqLength));
  LLMPLAN_RETURN_IF_ERROR(
      in_range("full_attention_every", m.full_attention_every, 0, Model::kMaxLayers));
  if (!(m.activation_clamp >= 0 && m.activation_clamp <= 1e6)) {
    return bad("activation_clamp", "must be 0 (none) or in (0, 1e6], got " +
                                       std::to_string(m.activation_clamp));
  }
  if (m.activation_clamp > 0 && m.activation != Activation::kSwiglu) {
    return bad("activation_clamp", "needs the gated activation (swiglu)");
  }
  if (!(m.rotary_fraction >= 0 && m.rotary_fraction <= 1)) {
    return bad("rotary_fraction", "must be in [0, 1], got " + std::to_string(m.rotary_fraction));
  }
  if (m.rotary_fraction != 1.0 && m.positions != PositionEmbedding::kRotary) {
    return bad("rotary_fraction", "needs rotary positions");
  }
  if (m.full_attention_every > 0 && m.sliding_window == 0) {
    return bad("full_attention_every", "needs a sliding_window");
  }
  // Chunked attention (Llama 4).
  LLMPLAN_RETURN_IF_ERROR(in_range("attention_chunk", m.attention_chunk, 0, Model::kMaxSeqLength));
  LLMPLAN_RETURN_IF_ERROR(
      in_range("global_attention_every", m.global_attention_every, 0, Model::kMaxLayers));
  if (m.global_attention_every > 0 && m.attention_chunk == 0) {
    return bad("global_attention_every", "needs an attention_chunk");
  }
  if (m.attention_chunk > 0 && m.sliding_window > 0) {
    return bad("attention_chunk", "cannot be combined with sliding_window (give one of them)");
  }
  LLMPLAN_RETURN_IF_ERROR(in_range("experts", m.num_experts, 0, Model::kMaxExperts));
  if (!m.is_moe()) {
    // A dense model: no expert field may be set (it would be silently ignored).
    if (m.moe_top_k != 0) return bad("top_k", "needs experts (the model is dense)");
    if (m.moe_ffn_hidden_size != 0) return bad("expert_ffn_hidden", "needs experts (the model is dense)");
    if (m.moe_shared_experts != 0) return bad("shared_experts", "needs experts (the model is dense)");
    if (m.moe_layer_every != 1) return bad("moe_every", "needs experts (the model is dense)");
    if (m.moe_first_dense != 0) return bad("moe_first_dense", "needs experts (the model is dense)");
    if (m.moe_capacity_factor != 0) return bad("capacity_factor", "needs experts (the model is dense)");
    if (m.moe_router != MoeRouter::kSoftmax) return bad("router", "needs experts (the model is dense)");
    if (m.moe_router_groups != 0) return bad("router_groups", "needs experts (the model is dense)");
    if (m.moe_router_group_limit != 0) {
      return bad("router_group_limit", "needs experts (the model is dense)");
    }
  } else {
    LLMPLAN_RETURN_IF_ERROR(in_range("top_k", m.moe_top_k, 1, m.num_experts));
    LLMPLAN_RETURN_IF_ERROR(
        in_range("expert_ffn_hidden", m.moe_ffn_hidden_size, 0, Model::kMaxFfnHidden));
    LLMPLAN_RETURN_IF_ERROR(in_range("shared_experts", m.moe_shared_experts, 0, Model::kMaxExperts));
    LLMPLAN_RETURN_IF_ERROR(in_range("moe_every", m.moe_layer_every, 1, Model::kMaxLayers));
    LLMPLAN_RETURN_IF_ERROR(in_range("moe_first_dense", m.moe_first_dense, 0, m.num_layers - 1));
    if (!(m.moe_capacity_factor == 0 || (m.moe_capacity_factor >= 1 && m.moe_capacity_factor <= 64))) {
      return bad("capacity_factor", "must be 0 (dropless) or in [1, 64], got " +
                                        std::to_string(m.moe_capacity_factor));
    }
    // Node-limited routing: both 0 (off), or groups dividing the experts
    // and a limit in [1, groups].
    LLMPLAN_RETURN_IF_ERROR(in_range("router_groups", m.moe_router_groups, 0, m.num_experts));
    if (m.moe_router_groups > 0 && m.num_experts % m.moe_router_groups != 0) {
      return bad("router_groups", "must divide experts (" + std::to_string(m.num_experts) +
                                      "), got " + std::to_string(m.moe_router_groups));
    }
    if (m.moe_router_groups == 0 && m.moe_router_group_limit != 0) {
      return bad("router_group_limit", "needs router_groups");
    }
    if (m.moe_router_groups > 0) {
      LLMPLAN_RETURN_IF_ERROR(
          in_range("router_group_limit", m.moe_router_group_limit, 1, m.moe_router_groups));
    }
  }
  // Latent MoE.
  LLMPLAN_RETURN_IF_ERROR(in_range("moe_latent_size", m.moe_latent_size, 0, m.hidden_size));
  if (m.moe_latent_size > 0 && !m.is_moe()) {
    return bad("moe_latent_size", "needs experts (the model is dense)");
  }
  // Multi-head latent attention and MTP.
  LLMPLAN_RETURN_IF_ERROR(in_range("q_lora_rank", m.q_lora_rank, 0, Model::kMaxHidden));
  LLMPLAN_RETURN_IF_ERROR(in_range("kv_lora_rank", m.kv_lora_rank, 0, Model::kMaxHidden));
  LLMPLAN_RETURN_IF_ERROR(in_range("qk_nope_head_dim", m.qk_nope_head_dim, 0, Model::kMaxHidden));
  LLMPLAN_RETURN_IF_ERROR(in_range("qk_rope_head_dim", m.qk_rope_head_dim, 0, Model::kMaxHidden));
  LLMPLAN_RETURN_IF_ERROR(in_range("v_head_dim", m.v_head_dim, 0, Model::kMaxHidden));
  LLMPLAN_RETURN_IF_ERROR(in_range("mtp_layers", m.mtp_layers, 0, Model::kMaxLayers));
  if (m.mtp_shared_weights && m.mtp_layers == 0) {
    return bad("mtp_shared_weights", "needs mtp_layers > 0");
  }
  if (!m.mtp_layer_pattern.empty()) {
    if (m.mtp_layers == 0) return bad("mtp_layer_pattern", "needs mtp_layers > 0");
    if (!m.is_hybrid()) return bad("mtp_layer_pattern", "needs a layer_pattern (a hybrid model)");
    for (size_t i = 0; i < m.mtp_layer_pattern.size(); ++i) {
      const char c = m.mtp_layer_pattern[i];
      if (std::string_view("M*-E").find(c) == std::string_view::npos) {
        return bad("mtp_layer_pattern", std::string("character '") + c + "' at " +
                                            std::to_string(i) + " is not M, *, - or E");
      }
      if (m.layer_pattern.find(c) == std::string::npos) {
        return bad("mtp_layer_pattern", std::string("has '") + c +
                                            "', which layer_pattern does not have");
      }
    }
    if (m.mtp_layer_pattern.size() > 64) {
      return bad("mtp_layer_pattern", "must be at most 64 characters, got " +
                                          std::to_string(m.mtp_layer_pattern.size()));
    }
  }
  if (!m.is_mla()) {
    const char* off = "needs kv_lora_rank > 0 (MLA is off)";
    if (m.q_lora_rank != 0) return bad("q_lora_rank", off);
    if (m.qk_nope_head_dim != 0) return bad("qk_nope_head_dim", off);
    if (m.qk_rope_head_dim != 0) return bad("qk_rope_head_dim", off);
    if (m.v_head_dim != 0) return bad("v_head_dim", off);
  } else {
    LLMPLAN_RETURN_IF_ERROR(in_range("qk_nope_head_dim", m.qk_nope_head_dim, 1, Model::kMaxHidden));
    LLMPLAN_RETURN_IF_ERROR(in_range("qk_rope_head_dim", m.qk_rope_head_dim, 1, Model::kMaxHidden));
    LLMPLAN_RETURN_IF_ERROR(in_range("v_head_dim", m.v_head_dim, 1, Model::kMaxHidden));
    if (m.head_dim_size != 0) return bad("head_dim", "must be unset with MLA (kv_lora_rank > 0): its widths are qk_nope_head_dim, qk_rope_head_dim and v_head_dim");
    if (m.num_kv_heads != 0 && m.num_kv_heads != m.num_heads) {
      return bad("kv_heads", "must be unset with MLA (kv_lora_rank > 0): every head has its own key and value");
    }
    if (m.linear_bias) return bad("linear_bias", "must be false with MLA (kv_lora_rank > 0)");
    if (m.positions != PositionEmbedding::kRotary) {
      return bad("positions", "must be rotary with MLA (kv_lora_rank > 0)");
    }
    const int64_t widest = static_cast<int64_t>(m.num_heads) *
                           (std::max(m.qk_nope_head_dim + m.qk_rope_head_dim, m.v_head_dim));
    if (widest > Model::kMaxFfnHidden) {
      return bad("heads", "heads x MLA head width must be at most " +
                              std::to_string(Model::kMaxFfnHidden) + ", got " +
                              std::to_string(widest));
    }
  }
  // Hybrid layer pattern and the Mamba-2 mixer.
  {
    const bool hybrid = m.is_hybrid();
    const bool has_mamba = hybrid && m.layer_pattern.find('M') != std::string::npos;
    if (hybrid) {
      if (static_cast<int64_t>(m.layer_pattern.size()) != m.num_layers) {
        return bad("layer_pattern", "has " + std::to_string(m.layer_pattern.size()) +
                                        " characters, layers is " + std::to_string(m.num_layers));
      }
      const size_t at = m.layer_pattern.find_first_not_of("M*-E");
      if (at != std::string::npos) {
        return bad("layer_pattern", std::string("character '") + m.layer_pattern[at] + "' at " +
                                        std::to_string(at) + " is not M, *, - or E");
      }
      if (m.moe_layer_every != 1) return bad("moe_every", "must be left at 1 with a layer_pattern");
      if (m.moe_first_dense != 0) {
        return bad("moe_first_dense", "must be left at 0 with a layer_pattern");
      }
      const bool has_e = m.layer_pattern.find('E') != std::string::npos;
      if (has_e && !m.is_moe()) return bad("layer_pattern", "has MoE layers (E) but experts is 0");
      if (!has_e && m.is_moe()) return bad("experts", "set, but layer_pattern has no E layer");
    }
    if (has_mamba) {
      LLMPLAN_RETURN_IF_ERROR(in_range("mamba_heads", m.mamba_heads, 1, Model::kMaxHidden));
      LLMPLAN_RETURN_IF_ERROR(in_range("mamba_head_dim", m.mamba_head_dim, 1, 4096));
      LLMPLAN_RETURN_IF_ERROR(in_range("mamba_state_dim", m.mamba_state_dim, 1, 4096));
      LLMPLAN_RETURN_IF_ERROR(in_range("mamba_groups", m.mamba_groups, 1, m.mamba_heads));
      LLMPLAN_RETURN_IF_ERROR(in_range("mamba_conv_kernel", m.mamba_conv_kernel, 1, 64));
      LLMPLAN_RETURN_IF_ERROR(in_range("mamba_chunk_size", m.mamba_chunk_size, 1, 4096));
      if (m.mamba_heads % m.mamba_groups != 0) {
        return bad("mamba_groups", std::to_string(m.mamba_groups) + " groups do not divide " +
                                       std::to_string(m.mamba_heads) + " mamba_heads");
      }
      if (static_cast<int64_t>(m.mamba_heads) * m.mamba_head_dim > Model::kMaxFfnHidden ||
          static_cast<int64_t>(m.mamba_groups) * m.mamba_state_dim > Model::kMaxFfnHidden) {
        return bad("mamba_heads", "mamba_heads x mamba_head_dim and mamba_groups x "
                                  "mamba_state_dim must be at most " +
                                      std::to_string(Model::kMaxFfnHidden));
      }
    } else {
      // No Mamba layer: no Mamba field may be set (it would be silently ignored).
      const char* why = "needs Mamba layers (M in layer_pattern)";
      if (m.mamba_heads != 0) return bad("mamba_heads", why);
      if (m.mamba_head_dim != 0) return bad("mamba_head_dim", why);
      if (m.mamba_state_dim != 0) return bad("mamba_state_dim", why);
      if (m.mamba_groups != 0) return bad("mamba_groups", why);
      if (m.mamba_conv_kernel != 4) return bad("mamba_conv_kernel", why);
      if (m.mamba_chunk_size != 128) return bad("mamba_chunk_size", why);
    }
  }
  // Bound the total before any int64_t count is formed (see kMaxParameters).
  {
    const double h = m.hidden_size, d = m.head_dim_size > 0 ? m.head_dim_size : 1.0;
    const double f = std::max<double>(m.ffn_hidden(), m.moe_ffn_hidden());
    const double attn = 4.0 * h * (static_cast<double>(m.num_heads) * d + h);
    const double experts = (static_cast<double>(m.num_experts) + m.moe_shared_experts + 1) * 3.0 * h * (f + 1);
    // MLA: every projection's input width times every output width, a bound.
    const double mla = (static_cast<double>(m.q_lora_rank) + m.kv_lora_rank + h) *
                       (static_cast<double>(m.num_heads) *
                            (2.0 * (m.qk_nope_head_dim + m.qk_rope_head_dim) + m.v_head_dim) +
                        m.q_lora_rank + m.kv_lora_rank + m.qk_rope_head_dim + h);
    const double mamba = m.is_hybrid() ? 3.0 * h * (static_cast<double>(m.mamba_heads) * m.mamba_head_dim +
                                                    static_cast<double>(m.mamba_groups) * m.mamba_state_dim + m.mamba_heads)
                                       : 0.0;
    const double total = (static_cast<double>(m.num_layers) +
                          static_cast<double>(m.mtp_layers) *
                              std::max<double>(1.0, static_cast<double>(m.mtp_layer_pattern.size()))) *
                             (attn + experts + (m.is_mla() ? mla : 0.0) + mamba) +
                         2.0 * static_cast<double>(m.vocab_size + m.seq_length) * h;
    if (total > Model::kMaxParameters) {
      return bad("experts", "the model has more than 2^56 (7.2e16) parameters (about " +
                                std::to_string(static_cast<long long>(total / 1e15)) +
                                "e15); llmplan's counts are bounded there");
    }
  }
  if (m.head_dim_size > 0 &&
      static_cast<int64_t>(m.num_heads) * m.head_dim_size > Model::kMaxFfnHidden) {
    return bad("head_dim", "heads x head_dim must be at most " +
                               std::to_string(Model::kMaxFfnHidden) + ", got " +
                               std::to_string(static_cast<int64_t>(m.num_heads) * m.head_dim_size));
  }
  if (!m.is_mla() && m.head_dim_size == 0 && m.hidden_size % m.num_heads != 0) {
    return bad("heads", std::to_string(m.num_heads) + " heads do not divide hidden size " +
                            std::to_string(m.hidden_size));
  }
  if (m.num_heads % m.kv_heads() != 0) {
    return bad("kv_heads", std::to_string(m.kv_heads()) + " kv heads do not divide " +
                               std::to_string(m.num_heads) + " heads");
  }
  return Status();
}

}  // namespace llmplan::simulator

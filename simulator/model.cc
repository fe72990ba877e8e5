#include "simulator/model.h"

#include <algorithm>
#include <string>

#include "simulator/layers/attention.h"
#include "simulator/layers/layer_kind.h"
#include "simulator/layers/mamba.h"
#include "simulator/layers/mla.h"
#include "simulator/layers/mlp.h"
#include "simulator/layers/moe.h"

namespace llmplan::simulator {

using layers::bad_field;
using layers::field_in_range;

Model::LayerKind Model::layer_kind(int layer) const {
  if (!is_hybrid()) return LayerKind::kStandard;
  switch (layer_pattern[static_cast<size_t>(layer)]) {
    case 'M': return LayerKind::kMamba;
    case '*': return LayerKind::kAttention;
    case '-': return LayerKind::kMlp;
    case 'E': return LayerKind::kMoe;
    default: return LayerKind::kRegistered;  // layers::find_layer_kind (validate() admits no other)
  }
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

namespace {

// validate()'s bounds on the sizes every model has.
Status validate_sizes(const Model& m) {
  LLMPLAN_RETURN_IF_ERROR(field_in_range("layers", m.num_layers, 1, Model::kMaxLayers));
  LLMPLAN_RETURN_IF_ERROR(field_in_range("hidden", m.hidden_size, 1, Model::kMaxHidden));
  LLMPLAN_RETURN_IF_ERROR(field_in_range("heads", m.num_heads, 1, Model::kMaxHidden));
  LLMPLAN_RETURN_IF_ERROR(field_in_range("kv_heads", m.num_kv_heads, 0, Model::kMaxHidden));
  LLMPLAN_RETURN_IF_ERROR(
      field_in_range("ffn_hidden", m.ffn_hidden_size, 0, Model::kMaxFfnHidden));
  LLMPLAN_RETURN_IF_ERROR(field_in_range("seq", m.seq_length, 1, Model::kMaxSeqLength));
  LLMPLAN_RETURN_IF_ERROR(field_in_range("vocab", m.vocab_size, 1, Model::kMaxVocab));
  LLMPLAN_RETURN_IF_ERROR(field_in_range("head_dim", m.head_dim_size, 0, Model::kMaxHidden));
  LLMPLAN_RETURN_IF_ERROR(
      field_in_range("sliding_window", m.sliding_window, 0, Model::kMaxSeqLength));
  return field_in_range("full_attention_every", m.full_attention_every, 0, Model::kMaxLayers);
}

// validate()'s checks of the multi-token prediction modules.
Status validate_mtp(const Model& m) {
  LLMPLAN_RETURN_IF_ERROR(field_in_range("mtp_layers", m.mtp_layers, 0, Model::kMaxLayers));
  if (m.mtp_shared_weights && m.mtp_layers == 0) {
    return bad_field("mtp_shared_weights", "needs mtp_layers > 0");
  }
  if (m.mtp_layer_pattern.empty()) return Status();
  if (m.mtp_layers == 0) return bad_field("mtp_layer_pattern", "needs mtp_layers > 0");
  if (!m.is_hybrid()) return bad_field("mtp_layer_pattern", "needs a layer_pattern (a hybrid model)");
  for (size_t i = 0; i < m.mtp_layer_pattern.size(); ++i) {
    const char c = m.mtp_layer_pattern[i];
    if (!layers::is_layer_symbol(c)) {
      return bad_field("mtp_layer_pattern", std::string("character '") + c + "' at " +
                                                std::to_string(i) + " is not M, *, - or E");
    }
    if (m.layer_pattern.find(c) == std::string::npos) {
      return bad_field("mtp_layer_pattern", std::string("has '") + c +
                                                "', which layer_pattern does not have");
    }
  }
  if (m.mtp_layer_pattern.size() > 64) {
    return bad_field("mtp_layer_pattern", "must be at most 64 characters, got " +
                                              std::to_string(m.mtp_layer_pattern.size()));
  }
  return Status();
}

// validate()'s checks of a hybrid model's layer pattern (its length, its
// characters, the MoE layers it names), then of its layer kinds' fields.
Status validate_layer_pattern(const Model& m) {
  const bool hybrid = m.is_hybrid();
  const bool has_mamba = hybrid && m.layer_pattern.find('M') != std::string::npos;
  if (hybrid) {
    if (static_cast<int64_t>(m.layer_pattern.size()) != m.num_layers) {
      return bad_field("layer_pattern", "has " + std::to_string(m.layer_pattern.size()) +
                                            " characters, layers is " + std::to_string(m.num_layers));
    }
    for (size_t at = 0; at < m.layer_pattern.size(); ++at) {
      if (!layers::is_layer_symbol(m.layer_pattern[at])) {
        return bad_field("layer_pattern", std::string("character '") + m.layer_pattern[at] +
                                              "' at " + std::to_string(at) +
                                              " is not M, *, - or E");
      }
    }
    if (m.moe_layer_every != 1) return bad_field("moe_every", "must be left at 1 with a layer_pattern");
    if (m.moe_first_dense != 0) {
      return bad_field("moe_first_dense", "must be left at 0 with a layer_pattern");
    }
    const bool has_e = m.layer_pattern.find('E') != std::string::npos;
    if (has_e && !m.is_moe()) return bad_field("layer_pattern", "has MoE layers (E) but experts is 0");
    if (!has_e && m.is_moe()) return bad_field("experts", "set, but layer_pattern has no E layer");
  }
  LLMPLAN_RETURN_IF_ERROR(layers::validate_mamba(m, has_mamba));
  for (const layers::LayerKindSpec& kind : layers::registered_layer_kinds()) {
    if (hybrid && m.layer_pattern.find(kind.symbol) != std::string::npos) {
      LLMPLAN_RETURN_IF_ERROR(kind.validate(m));
    }
  }
  return Status();
}

// Bounds the total before any int64_t count is formed (see kMaxParameters).
Status validate_parameter_bound(const Model& m) {
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
    return bad_field("experts", "the model has more than 2^56 (7.2e16) parameters (about " +
                                    std::to_string(static_cast<long long>(total / 1e15)) +
                                    "e15); llmplan's counts are bounded there");
  }
  return Status();
}

}  // namespace

Status validate(const Model& m) {
  // The checks run in this order; the first failing one is reported.
  LLMPLAN_RETURN_IF_ERROR(validate_sizes(m));
  LLMPLAN_RETURN_IF_ERROR(layers::validate_activation_clamp(m));
  LLMPLAN_RETURN_IF_ERROR(layers::validate_attention_windows(m));
  LLMPLAN_RETURN_IF_ERROR(layers::validate_moe(m));
  LLMPLAN_RETURN_IF_ERROR(layers::validate_mla_sizes(m));
  LLMPLAN_RETURN_IF_ERROR(validate_mtp(m));
  LLMPLAN_RETURN_IF_ERROR(layers::validate_mla(m));
  LLMPLAN_RETURN_IF_ERROR(validate_layer_pattern(m));
  LLMPLAN_RETURN_IF_ERROR(validate_parameter_bound(m));
  return layers::validate_attention_heads(m);
}

}  // namespace llmplan::simulator

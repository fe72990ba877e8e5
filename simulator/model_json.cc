#include "simulator/model_json.h"

#include "base/strict_json.h"

namespace llmplan::simulator {

Status apply_model_json(const boost::json::value& v, const std::string& path, Model* out) {
  Model m = *out;
  json::JsonObjectReader r(v, path);
  r.read_string("name", &m.name);
  r.read_int("layers", &m.num_layers, false, 1);
  r.read_int("hidden", &m.hidden_size, false, 1);
  r.read_int("heads", &m.num_heads, false, 1);
  // Widths that default when absent (kv_heads = heads, ffn_hidden = 4 x
  // hidden, expert_ffn_hidden = ffn_hidden): an explicit value is a width,
  // so 0 is an error, not the default (issue 48, item 3).
  r.read_int("kv_heads", &m.num_kv_heads, false, 1);
  r.read_int("ffn_hidden", &m.ffn_hidden_size, false, 1);
  r.read_int("seq", &m.seq_length, false, 1);
  r.read_int("vocab", &m.vocab_size, false, 1);
  r.read_enum("activation", &m.activation,
              {{"gelu", Activation::kGelu},
               {"swiglu", Activation::kSwiglu},
               {"squared_relu", Activation::kSquaredRelu}});
  r.read_enum("positions", &m.positions,
              {{"learned", PositionEmbedding::kLearned}, {"rotary", PositionEmbedding::kRotary}});
  r.read_bool("tied_embeddings", &m.tied_embeddings);
  r.read_bool("linear_bias", &m.linear_bias);
  r.read_int("head_dim", &m.head_dim_size, false, 0);
  r.read_double("activation_clamp", &m.activation_clamp, false, 0);
  r.read_double("rotary_fraction", &m.rotary_fraction, false, 0.0);
  r.read_int("experts", &m.num_experts, false, 0);
  r.read_int("top_k", &m.moe_top_k, false, 0);
  r.read_int("expert_ffn_hidden", &m.moe_ffn_hidden_size, false, 1);
  r.read_int("shared_experts", &m.moe_shared_experts, false, 0);
  r.read_int("moe_every", &m.moe_layer_every, false, 1);
  r.read_int("moe_first_dense", &m.moe_first_dense, false, 0);
  r.read_enum("router", &m.moe_router,
              {{"softmax", MoeRouter::kSoftmax}, {"sigmoid", MoeRouter::kSigmoid}});
  r.read_double("capacity_factor", &m.moe_capacity_factor, false, 0);
  r.read_int("router_groups", &m.moe_router_groups, false, 0);
  r.read_int("router_group_limit", &m.moe_router_group_limit, false, 0);
  // Latent MoE (Model::moe_latent_size).
  r.read_int("moe_latent_size", &m.moe_latent_size, false, 0);
  r.read_int("sliding_window", &m.sliding_window, false, 0);
  r.read_int("full_attention_every", &m.full_attention_every, false, 0);
  // Chunked attention (Llama 4).
  r.read_int("attention_chunk", &m.attention_chunk, false, 0);
  r.read_int("global_attention_every", &m.global_attention_every, false, 0);
  // Multi-head latent attention and multi-token prediction (model.h).
  r.read_int("q_lora_rank", &m.q_lora_rank, false, 0);
  r.read_int("kv_lora_rank", &m.kv_lora_rank, false, 0);
  r.read_int("qk_nope_head_dim", &m.qk_nope_head_dim, false, 0);
  r.read_int("qk_rope_head_dim", &m.qk_rope_head_dim, false, 0);
  r.read_int("v_head_dim", &m.v_head_dim, false, 0);
  r.read_int("mtp_layers", &m.mtp_layers, false, 0);
  r.read_bool("mtp_shared_weights", &m.mtp_shared_weights);
  r.read_string("mtp_layer_pattern", &m.mtp_layer_pattern);
  // Hybrid Mamba models (Model::layer_pattern).
  r.read_string("layer_pattern", &m.layer_pattern);
  r.read_int("mamba_heads", &m.mamba_heads, false, 0);
  r.read_int("mamba_head_dim", &m.mamba_head_dim, false, 0);
  r.read_int("mamba_state_dim", &m.mamba_state_dim, false, 0);
  r.read_int("mamba_groups", &m.mamba_groups, false, 0);
  r.read_int("mamba_conv_kernel", &m.mamba_conv_kernel, false, 1);
  r.read_int("mamba_chunk_size", &m.mamba_chunk_size, false, 1);
  r.ignore("source");
  r.ignore("note");
  r.ignore("description");
  LLMPLAN_RETURN_IF_ERROR(r.finish());
  *out = std::move(m);
  return Status();
}

boost::json::value model_to_json(const Model& m) {
  boost::json::object o;
  o["name"] = m.name;
  o["layers"] = m.num_layers;
  o["hidden"] = m.hidden_size;
  o["heads"] = m.num_heads;
  // The widths the simulator uses (a defaulted one resolved), so that the
  // JSON reads back as the same model; 0 only in a shape template (heads
  // and hidden 0 too).
  o["kv_heads"] = m.kv_heads();
  o["ffn_hidden"] = m.ffn_hidden();
  o["seq"] = m.seq_length;
  o["vocab"] = m.vocab_size;
  o["activation"] = m.activation == Activation::kSwiglu        ? "swiglu"
                    : m.activation == Activation::kSquaredRelu ? "squared_relu"
                                                               : "gelu";
  o["positions"] = m.positions == PositionEmbedding::kRotary ? "rotary" : "learned";
  o["tied_embeddings"] = m.tied_embeddings;
  o["linear_bias"] = m.linear_bias;
  // Optional fields only when set, so dense models' JSON is unchanged.
  if (m.head_dim_size > 0) o["head_dim"] = m.head_dim_size;
  if (m.activation_clamp > 0) o["activation_clamp"] = m.activation_clamp;
  if (m.rotary_fraction != 1.0) o["rotary_fraction"] = m.rotary_fraction;
  if (m.is_moe()) {
    o["experts"] = m.num_experts;
    o["top_k"] = m.moe_top_k;
    o["expert_ffn_hidden"] = m.moe_ffn_hidden();
    o["shared_experts"] = m.moe_shared_experts;
    o["moe_every"] = m.moe_layer_every;
    o["moe_first_dense"] = m.moe_first_dense;
    o["router"] = m.moe_router == MoeRouter::kSigmoid ? "sigmoid" : "softmax";
    o["capacity_factor"] = m.moe_capacity_factor;
    // Node-limited routing only when set, so other MoE models' JSON is unchanged.
    if (m.moe_router_groups > 0) {
      o["router_groups"] = m.moe_router_groups;
      o["router_group_limit"] = m.moe_router_group_limit;
    }
    if (m.moe_latent_size > 0) o["moe_latent_size"] = m.moe_latent_size;
  }
  if (m.sliding_window > 0) {
    o["sliding_window"] = m.sliding_window;
    o["full_attention_every"] = m.full_attention_every;
  }
  // Chunked attention (Llama 4).
  if (m.attention_chunk > 0) {
    o["attention_chunk"] = m.attention_chunk;
    o["global_attention_every"] = m.global_attention_every;
  }
  if (m.is_mla()) {
    o["q_lora_rank"] = m.q_lora_rank;
    o["kv_lora_rank"] = m.kv_lora_rank;
    o["qk_nope_head_dim"] = m.qk_nope_head_dim;
    o["qk_rope_head_dim"] = m.qk_rope_head_dim;
    o["v_head_dim"] = m.v_head_dim;
  }
  if (m.mtp_layers > 0) o["mtp_layers"] = m.mtp_layers;
  if (m.mtp_shared_weights) o["mtp_shared_weights"] = true;
  if (!m.mtp_layer_pattern.empty()) o["mtp_layer_pattern"] = m.mtp_layer_pattern;
  if (m.is_hybrid()) {
    o["layer_pattern"] = m.layer_pattern;
    if (m.layer_pattern.find('M') != std::string::npos) {
      o["mamba_heads"] = m.mamba_heads;
      o["mamba_head_dim"] = m.mamba_head_dim;
      o["mamba_state_dim"] = m.mamba_state_dim;
      o["mamba_groups"] = m.mamba_groups;
      o["mamba_conv_kernel"] = m.mamba_conv_kernel;
      o["mamba_chunk_size"] = m.mamba_chunk_size;
    }
  }
  return o;
}

}  // namespace llmplan::simulator

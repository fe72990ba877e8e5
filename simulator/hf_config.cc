#include "simulator/hf_config.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <string_view>

#include "simulator/hf_config_reader.h"
#include "simulator/model_json.h"

namespace llmplan::simulator {

namespace {

using hf_internal::ignored_keys;
using hf_internal::Mapper;
using hf_internal::Reader;
using hf_internal::period_of;

enum class Arch {
  kLlama,
  kMistral,
  kMixtral,
  kQwen2,
  kQwen3,
  kQwen3Moe,
  kDeepseekV3,
  kGptOss,
  kLlama4,
  kLlama4Conditional,
  kNemotronH
};

struct ArchName {
  const char* name;
  Arch arch;
};
constexpr ArchName kArchitectures[] = {
    {"LlamaForCausalLM", Arch::kLlama},
    {"MistralForCausalLM", Arch::kMistral},
    {"MixtralForCausalLM", Arch::kMixtral},
    {"Qwen2ForCausalLM", Arch::kQwen2},
    {"Qwen3ForCausalLM", Arch::kQwen3},
    {"Qwen3MoeForCausalLM", Arch::kQwen3Moe},
    {"DeepseekV3ForCausalLM", Arch::kDeepseekV3},
    {"GptOssForCausalLM", Arch::kGptOss},
    {"Llama4ForCausalLM", Arch::kLlama4},
    {"Llama4ForConditionalGeneration", Arch::kLlama4Conditional},
    {"NemotronHForCausalLM", Arch::kNemotronH},
};


// Keys every listed architecture shares (Llama-style decoder).
Status map_common(Mapper& m, bool gated) {
  Reader& r = m.r;
  LLMPLAN_RETURN_IF_ERROR(m.set_int("layers", "num_hidden_layers", true));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("hidden", "hidden_size", true));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("heads", "num_attention_heads", true));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("kv_heads", "num_key_value_heads", false));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("vocab", "vocab_size", true));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("head_dim", "head_dim", false));
  LLMPLAN_ASSIGN_OR_RETURN(bool tied, r.boolean("tie_word_embeddings", false));
  m.out["tied_embeddings"] = tied;
  m.out["positions"] = "rotary";
  // Partial rotary (Model::rotary_fraction): the share of each head RoPE
  // rotates.
  if (r.has("partial_rotary_factor")) {
    LLMPLAN_ASSIGN_OR_RETURN(double partial, r.number("partial_rotary_factor"));
    m.out["rotary_fraction"] = partial;
  }
  m.out["linear_bias"] = false;
  if (gated) {
    // Every listed family's MLP is gated (gate, up, down projections):
    // it costs as SwiGLU whatever the gate's function.
    LLMPLAN_ASSIGN_OR_RETURN(std::string act, r.string("hidden_act"));
    if (!act.empty() && act != "silu" && act != "swish" && act != "gelu" &&
        act != "gelu_pytorch_tanh" && act != "gelu_new") {
      m.warn("hidden_act \"" + act + "\" (costed as a gated SiLU MLP)");
    }
    m.out["activation"] = "swiglu";
  }
  for (const char* bias : {"attention_bias", "mlp_bias"}) {
    LLMPLAN_ASSIGN_OR_RETURN(bool b, r.boolean(bias, false));
    if (b) m.warn(std::string(bias) + " true (biases are not counted; llmplan's linear_bias also adds norm biases)");
  }
  return Status();
}

// sliding_window on every layer (Mistral), or with use_sliding_window
// (Qwen2/3: windowed layers are those >= max_window_layers).
Status map_window(Mapper& m, bool qwen) {
  Reader& r = m.r;
  LLMPLAN_ASSIGN_OR_RETURN(int window, r.integer("sliding_window", false));
  if (qwen) {
    LLMPLAN_ASSIGN_OR_RETURN(bool use, r.boolean("use_sliding_window", false));
    if (!use) return Status();
    if (window == 0) return r.bad("use_sliding_window", "true but sliding_window is absent or null");
    LLMPLAN_ASSIGN_OR_RETURN(int first, r.integer("max_window_layers", false));
    if (first > 0) {
      m.warn("use_sliding_window with max_window_layers " + std::to_string(first) +
             " (windows on layers >= max_window_layers only are not expressible; no window modelled)");
      return Status();
    }
  }
  if (window > 0) m.out["sliding_window"] = window;
  return Status();
}

Status map_llama4_text(Mapper& m) {
  Reader& r = m.r;
  LLMPLAN_RETURN_IF_ERROR(map_common(m, true));
  LLMPLAN_ASSIGN_OR_RETURN(int layers, r.integer("num_hidden_layers", true));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("experts", "num_local_experts", true));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("top_k", "num_experts_per_tok", true));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("expert_ffn_hidden", "intermediate_size", true));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("ffn_hidden", "intermediate_size_mlp", false));
  // Llama4TextMoe: one shared expert of intermediate_size beside the routed
  // ones; Llama4Router: sigmoid of the top-k logits (modeling_llama4.py).
  m.out["shared_experts"] = 1;
  m.out["router"] = "sigmoid";
  // MoE layers: moe_layers, else range(step - 1, layers, step)
  // (configuration_llama4.py).
  LLMPLAN_ASSIGN_OR_RETURN(int step, r.integer("interleave_moe_layer_step", false, 1));
  if (step < 1) return r.bad("interleave_moe_layer_step", "must be at least 1");
  LLMPLAN_ASSIGN_OR_RETURN(std::vector<int> moe_layers, r.int_list("moe_layers"));
  if (!moe_layers.empty()) {
    std::vector<bool> special(layers, false);
    for (int i : moe_layers) {
      if (i >= layers) return r.bad("moe_layers", "layer " + std::to_string(i) + " is past num_hidden_layers");
      special[i] = true;
    }
    const int k = period_of(special);
    if (k == 0) return r.bad("moe_layers", "not every k-th layer from k - 1: not expressible");
    if (r.has("interleave_moe_layer_step") && k != step) {
      return r.bad("moe_layers", "conflicts with interleave_moe_layer_step " + std::to_string(step));
    }
    step = k;
  }
  m.out["moe_every"] = step;
  m.out["moe_first_dense"] = step - 1;
  // Chunked attention with NoPE global layers: no_rope_layers (1 = RoPE,
  // chunked), else a NoPE layer when (i + 1) % no_rope_layer_interval == 0.
  LLMPLAN_ASSIGN_OR_RETURN(int chunk, r.integer("attention_chunk_size", false));
  LLMPLAN_ASSIGN_OR_RETURN(int interval, r.integer("no_rope_layer_interval", false, 4));
  LLMPLAN_ASSIGN_OR_RETURN(std::vector<int> rope_layers, r.int_list("no_rope_layers"));
  if (!rope_layers.empty()) {
    if (static_cast<int>(rope_layers.size()) < layers) {
      return r.bad("no_rope_layers", "has " + std::to_string(rope_layers.size()) +
                                         " entries, fewer than num_hidden_layers " + std::to_string(layers));
    }
    std::vector<bool> nope(layers);
    for (int i = 0; i < layers; ++i) nope[i] = rope_layers[i] == 0;
    const int k = period_of(nope);
    if (k == 0 && std::any_of(nope.begin(), nope.end(), [](bool b) { return b; })) {
      return r.bad("no_rope_layers", "NoPE layers not every k-th layer from k - 1: not expressible");
    }
    if (r.has("no_rope_layer_interval") && k != 0 && k != interval) {
      return r.bad("no_rope_layers", "conflicts with no_rope_layer_interval " + std::to_string(interval));
    }
    interval = k;
  }
  if (chunk > 0) {
    m.out["attention_chunk"] = chunk;
    m.out["global_attention_every"] = interval;
  }
  return Status();
}

Status map_nemotron_h(Mapper& m) {
  Reader& r = m.r;
  LLMPLAN_RETURN_IF_ERROR(map_common(m, false));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("ffn_hidden", "intermediate_size", true));
  LLMPLAN_ASSIGN_OR_RETURN(std::string act, r.string("mlp_hidden_act"));
  if (act == "relu2" || act.empty()) {
    m.out["activation"] = "squared_relu";
  } else {
    return r.bad("mlp_hidden_act", "\"" + act + "\" is not supported (relu2 only)");
  }
  LLMPLAN_ASSIGN_OR_RETURN(std::string pattern, r.string("hybrid_override_pattern"));
  if (pattern.empty()) return r.bad("hybrid_override_pattern", "missing (required for this architecture)");
  m.out["layer_pattern"] = pattern;
  // Nemotron-H's attention layers apply no position embedding (Megatron-
  // Bridge MambaModelProvider: position_embedding_type "none").
  m.out["rotary_fraction"] = 0;
  LLMPLAN_RETURN_IF_ERROR(m.set_int("mamba_heads", "mamba_num_heads", true));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("mamba_head_dim", "mamba_head_dim", true));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("mamba_state_dim", "ssm_state_size", true));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("mamba_groups", "n_groups", true));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("mamba_conv_kernel", "conv_kernel", false));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("mamba_chunk_size", "chunk_size", false));
  if (r.has("n_routed_experts")) {
    LLMPLAN_RETURN_IF_ERROR(m.set_int("experts", "n_routed_experts", true));
    LLMPLAN_RETURN_IF_ERROR(m.set_int("top_k", "num_experts_per_tok", true));
    LLMPLAN_ASSIGN_OR_RETURN(int fe, r.integer("moe_intermediate_size", true));
    m.out["expert_ffn_hidden"] = fe;
    LLMPLAN_ASSIGN_OR_RETURN(int shared, r.integer("n_shared_experts", false));
    LLMPLAN_ASSIGN_OR_RETURN(int shared_f, r.integer("moe_shared_expert_intermediate_size", false, fe));
    // llmplan's shared experts have the experts' width: a wider shared
    // expert is a whole number of them (Nemotron 3 Nano: 3712 = 2 x 1856).
    if (shared > 0 && shared_f % fe != 0) {
      return r.bad("moe_shared_expert_intermediate_size",
                   "not a multiple of moe_intermediate_size " + std::to_string(fe) + ": not expressible");
    }
    m.out["shared_experts"] = shared * (shared_f / fe);
    m.out["router"] = "sigmoid";
    LLMPLAN_RETURN_IF_ERROR(m.set_int("moe_latent_size", "moe_latent_size", false));
  }
  // MTP (Nemotron 3 Super): the depth and, when given, its hybrid block.
  LLMPLAN_RETURN_IF_ERROR(m.set_int("mtp_layers", "num_nextn_predict_layers", false));
  if (r.has("mtp_hybrid_override_pattern")) {
    LLMPLAN_ASSIGN_OR_RETURN(std::string mtp, r.string("mtp_hybrid_override_pattern"));
    if (!mtp.empty()) m.out["mtp_layer_pattern"] = mtp;
  }
  return Status();
}

// Qwen3-MoE: routed experts on every decoder_sparse_step-th layer.
Status map_qwen3_moe(Mapper& m) {
  Reader& r = m.r;
  LLMPLAN_RETURN_IF_ERROR(map_common(m, true));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("ffn_hidden", "intermediate_size", false));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("experts", "num_experts", true));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("top_k", "num_experts_per_tok", true));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("expert_ffn_hidden", "moe_intermediate_size", true));
  m.out["router"] = "softmax";
  // Qwen3MoeDecoderLayer: sparse when (i + 1) % decoder_sparse_step == 0
  // and i is not in mlp_only_layers (modeling_qwen3_moe.py).
  LLMPLAN_ASSIGN_OR_RETURN(int step, r.integer("decoder_sparse_step", false, 1));
  if (step < 1) return r.bad("decoder_sparse_step", "must be at least 1");
  LLMPLAN_ASSIGN_OR_RETURN(std::vector<int> dense, r.int_list("mlp_only_layers"));
  int first = step - 1;
  if (!dense.empty()) {
    std::vector<int> sorted = dense;
    std::sort(sorted.begin(), sorted.end());
    const bool prefix = step == 1 && sorted.front() == 0 &&
                        sorted.back() == static_cast<int>(sorted.size()) - 1;
    if (!prefix) return r.bad("mlp_only_layers", "not a prefix 0..k-1 of the layers: not expressible");
    first = static_cast<int>(sorted.size());
  }
  m.out["moe_every"] = step;
  m.out["moe_first_dense"] = first;
  return map_window(m, true);
}

// DeepSeek-V3: MoE with shared experts, MLA, MTP, group-limited routing.
Status map_deepseek_v3(Mapper& m) {
  Reader& r = m.r;
  LLMPLAN_RETURN_IF_ERROR(map_common(m, true));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("ffn_hidden", "intermediate_size", true));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("experts", "n_routed_experts", true));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("top_k", "num_experts_per_tok", true));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("expert_ffn_hidden", "moe_intermediate_size", true));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("shared_experts", "n_shared_experts", false));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("moe_first_dense", "first_k_dense_replace", false));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("moe_every", "moe_layer_freq", false));
  LLMPLAN_ASSIGN_OR_RETURN(std::string scoring, r.string("scoring_func"));
  if (!scoring.empty() && scoring != "sigmoid" && scoring != "softmax") {
    return r.bad("scoring_func", "unknown scoring function '" + scoring + "' (sigmoid or softmax)");
  }
  m.out["router"] = scoring == "sigmoid" ? "sigmoid" : "softmax";
  // Multi-head latent attention and MTP (keys of helper "mla"), group-
  // limited routing (helper "moe"). The KV head count of DeepSeek-V3's
  // config (128) restates the heads: MLA has no GQA.
  LLMPLAN_RETURN_IF_ERROR(m.set_int("q_lora_rank", "q_lora_rank", false));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("kv_lora_rank", "kv_lora_rank", true));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("qk_nope_head_dim", "qk_nope_head_dim", true));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("qk_rope_head_dim", "qk_rope_head_dim", true));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("v_head_dim", "v_head_dim", true));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("mtp_layers", "num_nextn_predict_layers", false));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("router_groups", "n_group", false));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("router_group_limit", "topk_group", false));
  return Status();
}

// GPT-OSS: biased MoE, clamped SwiGLU, alternating sliding-window layers.
Status map_gpt_oss(Mapper& m) {
  Reader& r = m.r;
  LLMPLAN_RETURN_IF_ERROR(map_common(m, true));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("ffn_hidden", "intermediate_size", true));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("expert_ffn_hidden", "intermediate_size", true));
  LLMPLAN_RETURN_IF_ERROR(m.set_int("experts", "num_local_experts", true));
  LLMPLAN_ASSIGN_OR_RETURN(int k, r.integer("num_experts_per_tok", false));
  LLMPLAN_ASSIGN_OR_RETURN(int k2, r.integer("experts_per_token", false));
  if (k > 0 && k2 > 0 && k != k2) {
    return r.bad("experts_per_token", "conflicts with num_experts_per_tok " + std::to_string(k));
  }
  if (k == 0 && k2 == 0) return r.bad("num_experts_per_tok", "missing (required for this architecture)");
  m.out["top_k"] = k > 0 ? k : k2;
  m.out["router"] = "softmax";
  // GPT-OSS: biased attention and expert projections (model card).
  LLMPLAN_ASSIGN_OR_RETURN(bool bias, r.boolean("attention_bias", true));
  m.out["linear_bias"] = bias;
  m.warnings.erase(std::remove_if(m.warnings.begin(), m.warnings.end(),
                                  [](const std::string& w) { return w.rfind("attention_bias", 0) == 0; }),
                   m.warnings.end());
  m.warn("attention sinks (one learned logit per head, GptOssAttention.sinks; not costed)");
  // The clamped gated activation (Model::activation_clamp).
  LLMPLAN_ASSIGN_OR_RETURN(double clamp, r.number("swiglu_limit"));
  if (clamp > 0) m.out["activation_clamp"] = clamp;
  LLMPLAN_ASSIGN_OR_RETURN(int window, r.integer("sliding_window", false));
  LLMPLAN_ASSIGN_OR_RETURN(int layers, r.integer("num_hidden_layers", true));
  LLMPLAN_ASSIGN_OR_RETURN(std::vector<std::string> types, r.string_list("layer_types"));
  if (window > 0) {
    m.out["sliding_window"] = window;
    if (!types.empty()) {
      if (static_cast<int>(types.size()) != layers) {
        return r.bad("layer_types", "has " + std::to_string(types.size()) +
                                        " entries, not num_hidden_layers " + std::to_string(layers));
      }
      std::vector<bool> full(layers);
      for (int i = 0; i < layers; ++i) {
        if (types[i] != "full_attention" && types[i] != "sliding_attention") {
          return r.bad("layer_types", "unknown layer type \"" + types[i] + "\"");
        }
        full[i] = types[i] == "full_attention";
      }
      const int every = period_of(full);
      if (every == 0 && std::any_of(full.begin(), full.end(), [](bool b) { return b; })) {
        return r.bad("layer_types", "full-attention layers not every k-th layer from k - 1: not expressible");
      }
      m.out["full_attention_every"] = every;
    }
  }
  return Status();
}

Status map_architecture(Arch arch, Mapper& m) {
  switch (arch) {
    case Arch::kLlama:
    case Arch::kQwen3:
      LLMPLAN_RETURN_IF_ERROR(map_common(m, true));
      LLMPLAN_RETURN_IF_ERROR(m.set_int("ffn_hidden", "intermediate_size", true));
      if (arch == Arch::kQwen3) LLMPLAN_RETURN_IF_ERROR(map_window(m, true));
      return Status();
    case Arch::kQwen2:
      LLMPLAN_RETURN_IF_ERROR(map_common(m, true));
      LLMPLAN_RETURN_IF_ERROR(m.set_int("ffn_hidden", "intermediate_size", true));
      // Qwen2Attention: q, k, v projections with bias (modeling_qwen2.py).
      m.warn("Qwen2's q/k/v biases (not counted)");
      return map_window(m, true);
    case Arch::kMistral:
      LLMPLAN_RETURN_IF_ERROR(map_common(m, true));
      LLMPLAN_RETURN_IF_ERROR(m.set_int("ffn_hidden", "intermediate_size", true));
      return map_window(m, false);
    case Arch::kMixtral:
      LLMPLAN_RETURN_IF_ERROR(map_common(m, true));
      LLMPLAN_RETURN_IF_ERROR(m.set_int("ffn_hidden", "intermediate_size", true));
      LLMPLAN_RETURN_IF_ERROR(m.set_int("expert_ffn_hidden", "intermediate_size", true));
      LLMPLAN_RETURN_IF_ERROR(m.set_int("experts", "num_local_experts", true));
      LLMPLAN_RETURN_IF_ERROR(m.set_int("top_k", "num_experts_per_tok", true));
      m.out["router"] = "softmax";
      return map_window(m, false);
    case Arch::kQwen3Moe:
      return map_qwen3_moe(m);
    case Arch::kDeepseekV3:
      return map_deepseek_v3(m);
    case Arch::kGptOss:
      return map_gpt_oss(m);
    case Arch::kLlama4:
    case Arch::kLlama4Conditional:
      return map_llama4_text(m);
    case Arch::kNemotronH:
      return map_nemotron_h(m);
  }
  return Status();
}

}  // namespace

bool is_hf_config(const boost::json::value& v) {
  return v.is_object() && v.as_object().contains("architectures");
}

std::string hf_supported_architectures() {
  std::string s;
  for (const ArchName& a : kArchitectures) {
    if (!s.empty()) s += ", ";
    s += a.name;
  }
  return s;
}

Result<HfModel> model_from_hf_config(const boost::json::value& v, const std::string& path) {
  if (!v.is_object()) return Status::invalid_argument(path + ": expected a JSON object");
  const boost::json::object& top = v.as_object();
  const boost::json::value* archs = top.if_contains("architectures");
  if (archs == nullptr || !archs->is_array() || archs->as_array().empty()) {
    return Status::invalid_argument(path + ": architectures: expected a non-empty array of strings");
  }
  HfModel hf;
  Arch arch = Arch::kLlama;
  bool found = false;
  std::string names;
  for (const boost::json::value& a : archs->as_array()) {
    if (!a.is_string()) {
      return Status::invalid_argument(path + ": architectures: expected a non-empty array of strings");
    }
    if (!names.empty()) names += ", ";
    names += std::string(a.as_string());
    for (const ArchName& known : kArchitectures) {
      if (!found && a.as_string() == known.name) {
        arch = known.arch;
        hf.architecture = known.name;
        found = true;
      }
    }
  }
  if (!found) {
    return Status::invalid_argument(path + ": architectures: unsupported architecture " + names +
                                    " (supported: " + hf_supported_architectures() + ")");
  }
  // Llama4ForConditionalGeneration: the language model is text_config.
  const boost::json::object* cfg = &top;
  std::string key_prefix;
  std::vector<std::string> unknown;
  if (arch == Arch::kLlama4Conditional) {
    const boost::json::value* text = top.if_contains("text_config");
    if (text == nullptr || !text->is_object()) {
      return Status::invalid_argument(path + ": text_config: expected an object (the language model)");
    }
    cfg = &text->as_object();
    key_prefix = "text_config.";
    for (const auto& kv : top) {
      const std::string key(kv.key());
      if (key == "text_config" || key == "architectures") continue;
      if (key == "tie_word_embeddings") {
        hf.ignored.push_back(key);  // text_config's decides
      } else if (key == "vision_config") {
        hf.warnings.push_back("vision_config (the vision encoder and projector are not modelled)");
      } else if (ignored_keys().count(key) > 0) {
        hf.ignored.push_back(key);
      } else {
        unknown.push_back(key);
      }
    }
  }
  Reader r(*cfg, path, key_prefix);
  Mapper m{r, {}, {}};
  LLMPLAN_RETURN_IF_ERROR(map_architecture(arch, m));
  // Sequence: max_position_embeddings bounds it (see the header).
  LLMPLAN_ASSIGN_OR_RETURN(int max_pos, r.integer("max_position_embeddings", false));
  const int seq = max_pos > 0 ? std::min(max_pos, kDefaultHfSeq) : kDefaultHfSeq;
  m.out["seq"] = seq;
  hf.seq_note = "seq " + std::to_string(seq) +
                (max_pos > kDefaultHfSeq
                     ? " (max_position_embeddings " + std::to_string(max_pos) +
                           " is the context limit, not the training length; give --seq to change)"
                     : max_pos > 0 ? " (max_position_embeddings)" : " (no max_position_embeddings)");
  {
    std::string name;
    const boost::json::value* n = top.if_contains("_name_or_path");
    if (n != nullptr && n->is_string()) name = std::string(n->as_string());
    if (!name.empty()) m.out["name"] = name;
  }
  r.find("architectures");  // read above (top level)
  std::vector<std::string> ignored;
  const size_t top_unknown = unknown.size();  // Llama 4's own keys, beside text_config
  r.leftovers(&ignored, &unknown);
  LLMPLAN_RETURN_IF_ERROR(
      r.misspelt(std::vector<std::string>(unknown.begin() + top_unknown, unknown.end())));
  for (const std::string& k : ignored) {
    if (std::find(hf.ignored.begin(), hf.ignored.end(), k) == hf.ignored.end()) hf.ignored.push_back(k);
  }
  for (const std::string& w : m.warnings) hf.warnings.push_back(w);
  for (const std::string& k : unknown) hf.warnings.push_back(k + " (unknown to llmplan)");
  LLMPLAN_RETURN_IF_ERROR(apply_model_json(m.out, path + ": " + key_prefix + "(mapped)", &hf.model));
  LLMPLAN_RETURN_IF_ERROR(validate(hf.model).with_prefix(path));
  return hf;
}

std::vector<std::string> hf_config_notes(const HfModel& hf, const std::string& path) {
  std::vector<std::string> lines;
  std::string line = path + ": Hugging Face config (" + hf.architecture + "): " + hf.seq_note;
  if (!hf.ignored.empty()) {
    line += "; ignored (no effect on time or memory):";
    for (size_t i = 0; i < hf.ignored.size(); ++i) line += (i ? ", " : " ") + hf.ignored[i];
  }
  lines.push_back(line);
  if (!hf.warnings.empty()) {
    std::string w = path + ": warning: not modelled:";
    for (size_t i = 0; i < hf.warnings.size(); ++i) w += (i ? "; " : " ") + hf.warnings[i];
    lines.push_back(w);
  }
  return lines;
}

}  // namespace llmplan::simulator

// A Hugging Face `config.json` read as an llmplan model.
//
// A model file that holds the key "architectures" is a Hugging Face
// (transformers) config. Its first supported architecture decides how the
// config's keys map onto llmplan's model keys (simulator/model_json.h); the
// mapped object is then read by apply_model_json and checked by validate(),
// so an HF config can express exactly what an llmplan model file can.
//
// Supported: LlamaForCausalLM, MistralForCausalLM, MixtralForCausalLM,
// Qwen2ForCausalLM, Qwen3ForCausalLM, Qwen3MoeForCausalLM,
// DeepseekV3ForCausalLM, GptOssForCausalLM, Llama4ForCausalLM,
// Llama4ForConditionalGeneration (its text_config; the vision tower is not
// modelled and is named in a warning) and NemotronHForCausalLM.
//
// Every key of the config ends up in one of three lists:
//  - mapped onto a model field;
//  - ignored: keys that change neither time nor memory of training (rope
//    theta and scaling, token ids, dtype, init ranges, norm epsilons, ...),
//    listed in HfModel::ignored (partial_rotary_factor is mapped, to
//    rotary_fraction);
//  - not modelled: keys that do change time or memory but llmplan cannot
//    express (vision towers, attention sinks, Qwen2's qkv biases, keys
//    llmplan does not know), listed in HfModel::warnings.
// A JSON null is an absent key (Qwen3's "sliding_window": null).
//
// Sequence length: max_position_embeddings is the context the model
// supports (128 K to 10 M tokens), not the length it was trained at; the
// published pre-training runs of Llama 3 / 4 and Nemotron 3 use 8192 (and
// reach long context in a short extension stage). The model's seq is
// therefore min(max_position_embeddings, kDefaultHfSeq = 8192), and the
// caller overrides it with --seq; HfModel::seq_note says so.
//
// Pure; thread-safe.
#ifndef LLMPLAN_SIMULATOR_HF_CONFIG_H_
#define LLMPLAN_SIMULATOR_HF_CONFIG_H_

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "simulator/model.h"
#include "base/status.h"

namespace llmplan::simulator {

// The sequence an HF config's model gets when max_position_embeddings is
// longer (see above).
inline constexpr int kDefaultHfSeq = 8192;

struct HfModel {
  Model model;
  std::string architecture;           // the architecture that was mapped
  std::vector<std::string> ignored;   // keys without effect on time or memory
  std::vector<std::string> warnings;  // "key: why" for keys that matter but are not modelled
  std::string seq_note;               // how seq was chosen
};

// Whether `v` is an HF config: an object holding "architectures".
bool is_hf_config(const boost::json::value& v);

// The model an HF config describes. `path` prefixes every message
// ("cfg.json: architectures: ..."). Errors (InvalidArgument, one line):
// architectures not a non-empty array of strings, no supported architecture
// (the message lists the supported ones), a key of the wrong type, a
// required key missing, conflicting keys, an explicit 0 for a width, an
// unknown key one or two edits from an absent key the mapping reads (a
// misspelling, "did you mean"), or a model validate() refuses.
Result<HfModel> model_from_hf_config(const boost::json::value& v, const std::string& path);

// The notes for a user, one line each: "PATH: Hugging Face config (ARCH):
// seq ...; ignored (no effect on time or memory): k1, k2, ..." and one
// "PATH: warning: not modelled: ..." line when there are warnings.
std::vector<std::string> hf_config_notes(const HfModel& hf, const std::string& path);

// The supported architectures, comma-separated (for messages and docs).
std::string hf_supported_architectures();

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_HF_CONFIG_H_

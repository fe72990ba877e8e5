// JSON form of a Model (see model.h), for presets, configs and reports.
//
// Fields (all optional when applying):
//   name (string), layers, hidden, heads, kv_heads (absent: = heads),
//   ffn_hidden (absent: 4 * hidden), seq, vocab (integers), activation ("gelu" | "swiglu"),
//   positions ("learned" | "rotary"), tied_embeddings, linear_bias (booleans),
//   head_dim (0: hidden / heads), sliding_window, full_attention_every, and
//   for mixture-of-experts models experts, top_k, expert_ffn_hidden
//   (absent: ffn_hidden), shared_experts, moe_every, moe_first_dense (integers),
//   router ("softmax" | "sigmoid"), capacity_factor (0: dropless).
//   model_to_json writes head_dim, the window fields and the MoE fields only
//   when they are set (a dense model's JSON is as before).
// Numbers may be bare or {"value": X, "source": "..."}. The documentation keys
// "source", "note" and "description" are accepted and ignored; any other key
// is an error.
#ifndef LLMPLAN_SIMULATOR_MODEL_JSON_H_
#define LLMPLAN_SIMULATOR_MODEL_JSON_H_

#include <boost/json.hpp>
#include <string>

#include "simulator/model.h"
#include "base/status.h"

namespace llmplan::simulator {

// Applies the fields present in the JSON object `v` onto *out, leaving the
// others as they are, so a preset can be overridden field by field. `path`
// names the object in messages ("config.json: model").
//
// Returns InvalidArgument naming path.field for an unknown key, a wrong type,
// an unknown enum spelling or a value out of range (sizes, kv_heads,
// ffn_hidden and expert_ffn_hidden must be >= 1). Checks only single fields: whether the
// whole model is consistent is validate(Model)'s job. On error *out is left
// unchanged. Thread-safe (touches only its arguments).
Status apply_model_json(const boost::json::value& v, const std::string& path, Model* out);

// Every field of `model` as a JSON object, its defaulted widths resolved
// (kv_heads, ffn_hidden, expert_ffn_hidden), that apply_model_json reads back
// to model.with_resolved_widths().
boost::json::value model_to_json(const Model& model);

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_MODEL_JSON_H_

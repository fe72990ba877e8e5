// Model families and shape sizing (DESIGN.md section 6): the architecture
// templates of the automatic grid (gpt, llama, moe), the MoE grid's expert
// layouts, and the functions that size a shape of a family to a parameter
// count and lay out the geometric size grids the search walks.
//
// Every function is pure and thread-safe.
#ifndef LLMPLAN_PLANNER_SEARCH_SHAPES_H_
#define LLMPLAN_PLANNER_SEARCH_SHAPES_H_

#include <string>
#include <vector>

#include "simulator/model.h"
#include "base/status.h"

namespace llmplan::planner {

// The automatic model grid's architecture family.
enum class Family { kGpt, kLlama, kMoe };

// "gpt", "llama" or "moe"; InvalidArgument naming --family otherwise.
Result<Family> parse_family(const std::string& text);
const char* to_string(Family f);

// The family's template (everything but layers, hidden and heads): gpt
// (GPT-3: learned positions, GELU, 4h FFN, tied embeddings, biases, seq
// 2048, vocab 51,200) or llama (Llama 3: rotary, SwiGLU with FFN 8/3 h
// rounded up to a multiple of 256, GQA with 8 KV heads, untied embeddings,
// RMSNorm without biases, seq 8,192, vocab 128,256) or moe (the llama
// template with every layer an MoE layer, dropless softmax top-k routing;
// experts, top-k and expert width come from moe_shape_configs()).
// seq/vocab > 0 override.
simulator::Model family_template(Family family, int seq_length = 0, int vocab_size = 0);

// One expert layout of the MoE grid: routed experts, experts per token,
// expert FFN width as a fraction of hidden (rounded to a multiple of 128),
// shared (always-on) experts of that width.
struct MoeShapeConfig {
  int experts = 0;
  int top_k = 0;
  double expert_ffn_per_hidden = 0;
  int shared_experts = 0;
};

// The MoE grid's expert layouts, one per expert count 8, 16, 32, 64, 128,
// spanning the published designs from coarse to fine-grained:
//   8 experts, top-2, expert FFN 3.5 h (Mixtral 8x7B: 14336 / 4096),
//   16 experts, top-2, 1.5 h, 32 experts, top-4, 0.75 h (between them),
//   64 experts, top-8, 0.375 h + 1 shared expert (DeepSeekMoE-style: a
//   shared expert beside fine-grained routed ones),
//   128 experts, top-8, 0.375 h, no shared expert (Qwen3-235B-A22B: 1536 /
//   4096; Qwen3 dropped the shared expert).
// Expert widths shrink as the count grows (fine-grained experts, Krajewski
// et al. 2024), keeping the active expert width per token between 3 h and
// 7 h, as in those models. Only the first and last layouts are published
// designs; the middle ones interpolate. Five layouts keep the search within
// a few minutes on a small machine (each multiplies the shapes simulated).
const std::vector<MoeShapeConfig>& moe_shape_configs();

// An MoE shape of about `active` parameters per token (template `base`:
// family_template(kMoe)) with expert layout `config`: head dim 128, GQA with
// 8 KV heads, hidden and depth as shape_for_params (depth by
// pipeline_friendly_depth), every layer MoE. Named
// "moe-e128k8-l48-h4096".
simulator::Model moe_shape_for_active(double active, const simulator::Model& base,
                                      const MoeShapeConfig& config);

// The MoE grid: for each active size from min to max (ratio `step`) and
// each layout of moe_shape_configs(), one shape; deduplicated, ascending
// active parameters (ties: fewer experts first). At most kMaxGridSizes
// sizes.
std::vector<simulator::Model> moe_shape_grid(double min_active, double max_active, double step,
                                             const simulator::Model& base);

// The depth rule of the automatic grids: `layers` (a real number of layers)
// rounded to a depth that pipelines well: a multiple of 8 from 24 layers up
// (p = 2, 4 and 8 split it evenly, as GPT-3's 96, Llama 2 70B's 80 and
// Megatron-LM's 128-layer 1T configuration), a multiple of 4 from 6 to 23,
// any depth >= 2 below; at most 160. Issue 25: rounding to the nearest
// integer gave depths like 114, 133, 151 and 155, whose only pipeline sizes
// beyond the powers of two were 19, 31 or 7. Llama 3 405B's 126 layers
// (two fewer than 128, for the embedding and head stages) are not
// offered: the simulator splits uneven layer counts with the extra layers
// on the last chunks (simulator/plan.h, layers_in_chunk), not with the
// first and last stages one layer short as Llama 3 did, so such a depth
// would be simulated with a layout it did not use.
int pipeline_friendly_depth(double layers);

// A shape of `family` (template `base`: family_template) of about `params`
// parameters: head dim 128, hidden a multiple of 1024 (so t up to 8 divides
// the heads; 256 below 2048), depth near hidden/128 rounded by
// pipeline_friendly_depth().
// Named "gpt-l96-h12288" / "llama-l80-h8192".
simulator::Model shape_for_params(double params, const simulator::Model& base);
// The GPT family with this seq and vocab.
simulator::Model shape_for_params(double params, int seq_length, int vocab_size);

// Most sizes shape_grid() visits (1.07^1000 spans 29 orders of magnitude).
inline constexpr int kMaxGridSizes = 1000;

// Geometric size grid from min to max (ratio `step` > 1), deduplicated shapes,
// ascending parameter count; at most kMaxGridSizes sizes. Empty when the
// bounds are not finite and positive or step <= 1.
std::vector<simulator::Model> shape_grid(double min_params, double max_params, double step,
                                         const simulator::Model& base);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_SEARCH_SHAPES_H_

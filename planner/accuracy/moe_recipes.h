// The MoE settings of the Megatron-Bridge performance recipes that the runs
// files' columns do not carry: which token dispatcher a run used, how its
// pipeline split places the layers, and whether its expert-parallel
// all-to-alls overlap another micro-batch's compute. Applied by
// map_published_run() (runs_file.h) to Megatron-Bridge MoE rows after their
// plan and cluster are set; see moe_recipes.cc for the recipe lines read.
#ifndef LLMPLAN_PLANNER_ACCURACY_MOE_RECIPES_H_
#define LLMPLAN_PLANNER_ACCURACY_MOE_RECIPES_H_

#include <string>

#include "presets/sim_config.h"

namespace llmplan::planner {

// What a row of the runs file says about itself, for apply_moe_recipe.
struct MoeRecipeRow {
  std::string model;   // the models table's name, e.g. "qwen3-30b-a3b"
  std::string source;  // "Megatron-Bridge", "NeMo", ...
  int gpus = 0;
  std::string release;  // the container, e.g. "NeMo 26.04.01 (Megatron-Bridge)"
};

// Sets config->plan.moe_flex_dispatcher, the embedding- / loss-aware
// pipeline split, DeepSeek-V3's uneven pipeline layout and the all-to-all
// overlap where the row's recipe has them (a no-op for every other row,
// dense rows included).
void apply_moe_recipe(const MoeRecipeRow& row, presets::SimConfig* config);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_ACCURACY_MOE_RECIPES_H_

// The planner's training-objective flags (issue 29): --tokens N,
// --unique-tokens U, --inference-tokens T (token counts such as 15T, 3e12,
// 500B) and --serving-mfu. Registered on the root planner command only.
#ifndef LLMPLAN_PLANNER_CLI_OBJECTIVE_FLAGS_H_
#define LLMPLAN_PLANNER_CLI_OBJECTIVE_FLAGS_H_

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

#include "planner/search/objective.h"
#include "base/status.h"

namespace llmplan::planner {

struct ObjectiveFlags {
  std::string tokens, unique_tokens, inference_tokens;  // as given ("" : off)
  double serving_mfu = 0;
};

// Registers the flags on `app`, after add_planner_flags: --tokens excludes
// --tokens-per-param and --tokens-rule; --inference-tokens excludes --tokens,
// --unique-tokens and --model (one-line usage errors from the parser).
void add_objective_flags(CLI::App* app, ObjectiveFlags* flags);

// A token count: a positive finite number with an optional decimal suffix
// K (1e3), M (1e6), B or G (1e9), T (1e12), P (1e15), case-insensitive:
// "15T", "1.5e12", "500B". Usage error naming `flag` otherwise.
Result<double> parse_token_count(std::string_view text, const std::string& flag);

// The flags as a TrainingObjective (check_training_objective's errors).
Result<TrainingObjective> training_objective(const ObjectiveFlags& flags);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_CLI_OBJECTIVE_FLAGS_H_

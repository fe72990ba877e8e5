#include "planner/cli/objective_flags.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "planner/cli/command.h"

namespace llmplan::planner {

void add_objective_flags(CLI::App* app, ObjectiveFlags* f) {
  CLI::Option* tokens = app->add_option(
      "--tokens", f->tokens,
      "Planner: every candidate trains exactly N tokens (e.g. 15T); the largest model (or lowest "
      "loss) that does so by the deadline, with its tokens per parameter");
  tokens->excludes("--tokens-per-param")->excludes("--tokens-rule");
  CLI::Option* unique = app->add_option(
      "--unique-tokens", f->unique_tokens,
      "Planner: distinct training tokens available (e.g. 3T); candidates train as long as the "
      "deadline allows and are ranked by the data-constrained loss (Muennighoff et al. 2023), "
      "with their epochs and the loss penalty of repeating");
  CLI::Option* inference = app->add_option(
      "--inference-tokens", f->inference_tokens,
      "Planner: lifetime inference demand in tokens (e.g. 1e12); the model that reaches the "
      "compute-optimal answer's loss by the deadline with the least training + inference "
      "compute 6ND + 2NT (Sardana et al. 2024)");
  inference->excludes(tokens)->excludes(unique)->excludes("--model");
  app->add_option("--serving-mfu", f->serving_mfu,
                  "Planner: with --inference-tokens, the serving MFU that prices inference in "
                  "GPU-hours and dollars (e.g. 0.3; default: FLOPs only)")
      ->check(finite_in(0, 1, true))
      ->needs(inference);
}

Result<double> parse_token_count(std::string_view text, const std::string& flag) {
  const std::string s(text);
  auto bad = [&] {
    return Status::usage(flag + ": expected a token count such as 15T, 3e12 or 500B, got '" + s +
                         "'");
  };
  if (s.empty()) return bad();
  double scale = 1;
  std::string number = s;
  switch (std::toupper(static_cast<unsigned char>(s.back()))) {
    case 'K': scale = 1e3; break;
    case 'M': scale = 1e6; break;
    case 'B':
    case 'G': scale = 1e9; break;
    case 'T': scale = 1e12; break;
    case 'P': scale = 1e15; break;
    default: break;
  }
  if (scale != 1) number.pop_back();
  if (!is_decimal_number(number)) return bad();  // no hexadecimal, no spaces
  const double x = std::strtod(number.c_str(), nullptr);
  const double v = x * scale;
  if (!std::isfinite(v) || !(v >= 1) || v > kUnreachableTokens / 1e6) {
    return Status::usage(flag + ": must be a finite token count >= 1 (at most 1e294), got '" + s +
                         "'");
  }
  return v;
}

Result<TrainingObjective> training_objective(const ObjectiveFlags& f) {
  TrainingObjective t;
  if (!f.tokens.empty()) {
    LLMPLAN_ASSIGN_OR_RETURN(t.tokens, parse_token_count(f.tokens, "--tokens"));
  }
  if (!f.unique_tokens.empty()) {
    LLMPLAN_ASSIGN_OR_RETURN(t.unique_tokens, parse_token_count(f.unique_tokens, "--unique-tokens"));
  }
  if (!f.inference_tokens.empty()) {
    LLMPLAN_ASSIGN_OR_RETURN(t.inference_tokens,
                             parse_token_count(f.inference_tokens, "--inference-tokens"));
  }
  t.serving_mfu = f.serving_mfu;
  LLMPLAN_RETURN_IF_ERROR(check_training_objective(t).as_usage());
  return t;
}

}  // namespace llmplan::planner

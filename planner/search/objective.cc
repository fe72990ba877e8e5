#include "planner/search/objective.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "planner/search/search.h"
#include "scaling/optimal.h"

namespace llmplan::planner {

Status check_training_objective(const TrainingObjective& t) {
  for (auto [flag, x] : {std::pair{"--tokens", t.tokens},
                         {"--unique-tokens", t.unique_tokens},
                         {"--inference-tokens", t.inference_tokens}}) {
    if (!std::isfinite(x) || x < 0 || x > kUnreachableTokens) {
      return Status::invalid_argument(std::string(flag) + " must be a finite token count >= 0");
    }
  }
  if (!(t.serving_mfu >= 0 && t.serving_mfu <= 1)) {
    return Status::invalid_argument("--serving-mfu must be in (0, 1]");
  }
  if (t.inference_tokens > 0 && (t.tokens > 0 || t.unique_tokens > 0)) {
    return Status::usage(std::string("--inference-tokens chooses each candidate's tokens (those "
                                     "reaching the compute-optimal loss); it is not combined with ") +
                         (t.tokens > 0 ? "--tokens" : "--unique-tokens"));
  }
  return Status();
}

bool trains_to_deadline(const SearchOptions& o) {
  if (o.pinned || o.training.tokens > 0 || o.training.target_loss > 0) return false;
  return o.objective == Objective::kLoss || o.training.unique_tokens > 0;
}

double candidate_tokens(const SearchOptions& o, const simulator::Model& m, double n_active) {
  if (o.training.tokens > 0) return o.training.tokens;
  if (o.training.target_loss > 0) {
    const double n_law = scaling::effective_params(o.law.moe, n_active, moe_expansion(m));
    const double d = scaling::tokens_for_loss(o.law, n_law, o.training.target_loss);
    return std::isfinite(d) ? std::min(d, kUnreachableTokens) : kUnreachableTokens;
  }
  return rule_tokens(o.tokens, o.law, n_active);
}

double objective_loss(const SearchOptions& o, const simulator::Model& m, double n_active,
                      double tokens) {
  if (o.training.unique_tokens > 0) {
    const double n_law = scaling::effective_params(o.law.moe, n_active, moe_expansion(m));
    return scaling::data_constrained_loss(o.law, n_law, tokens, o.training.unique_tokens).loss;
  }
  return o.law.moe_loss(n_active, moe_expansion(m), tokens);
}

void fill_objective(const SearchOptions& o, Candidate* c) {
  const double n_active = c->active_params > 0 ? c->active_params : c->params;
  c->epochs = 0;
  c->repeat_penalty = 0;
  c->lifetime_flops = 0;
  if (o.training.unique_tokens > 0 && c->tokens > 0) {
    const double n_law = scaling::effective_params(o.law.moe, n_active, moe_expansion(c->model));
    const scaling::DataConstrainedLoss l =
        scaling::data_constrained_loss(o.law, n_law, c->tokens, o.training.unique_tokens);
    c->epochs = l.epochs;
    c->repeat_penalty = l.repeat_penalty;
  }
  if (o.training.target_loss > 0 && c->tokens < kUnreachableTokens) {
    c->lifetime_flops = scaling::lifetime_flops(n_active, c->tokens, o.training.inference_tokens);
  }
}

bool better_candidate(const SearchOptions& o, const Candidate& c, const Candidate& b) {
  if (o.training.target_loss > 0) {
    return c.lifetime_flops < b.lifetime_flops;
  }
  const bool by_loss = o.objective == Objective::kLoss || o.training.unique_tokens > 0 ||
                       c.model.is_moe() || b.model.is_moe();
  return by_loss ? c.loss < b.loss : c.params > b.params;
}

Result<SearchResult> search_for_inference(const simulator::Cluster& cluster,
                                          const SearchOptions& options) {
  // First pass: the compute-optimal answer, as without --inference-tokens.
  SearchOptions first = options;
  first.training.inference_tokens = 0;
  LLMPLAN_ASSIGN_OR_RETURN(SearchResult reference, search(cluster, first));
  if (reference.best < 0 || reference.pinned) return reference;
  const Candidate& ref = reference.candidates[reference.best];
  // Second pass: every candidate trains to the reference's loss (1e-9 nats
  // above it, so that rounding never leaves the reference short of it).
  SearchOptions second = options;
  second.training.target_loss = ref.loss + 1e-9;
  second.training.has_reference_model = true;
  second.training.reference_model = ref.model;
  LLMPLAN_ASSIGN_OR_RETURN(SearchResult result, search(cluster, second));
  InferenceReference& out = result.inference_reference;
  out.present = true;
  out.params = ref.params;
  out.active_params = ref.active_params > 0 ? ref.active_params : ref.params;
  out.tokens = ref.tokens;
  out.loss = ref.loss;
  out.days = ref.days;
  out.cost_usd = ref.cost_usd;
  out.lifetime_flops =
      scaling::lifetime_flops(out.active_params, ref.tokens, options.training.inference_tokens);
  // The law alone (dense laws: the MoE term's effective count is not
  // inverted, so the formula's N is a dense N).
  auto formula =
      scaling::lifetime_optimal(options.law, ref.loss, options.training.inference_tokens);
  if (formula.ok()) {
    out.formula_params = formula.value().n_params;
    out.formula_tokens = formula.value().tokens;
    out.formula_flops = formula.value().flops;
  }
  return result;
}

}  // namespace llmplan::planner

// The planner's training objectives beyond "20 tokens per parameter by the
// deadline" (issue 29): a fixed token budget (--tokens), a limit of unique
// training tokens (--unique-tokens, the data-constrained loss of
// scaling/objectives.h) and an inference demand (--inference-tokens, the
// lifetime compute of scaling/objectives.h). search.cc calls these where a
// candidate's tokens, loss and rank are set; the pure math is scaling's.
//
// How many tokens a candidate trains:
//  - --tokens N: exactly N (every objective); the answer is the largest
//    model (objective largest; MoE by loss) or the lowest loss that trains N
//    tokens by the deadline and within the budget. Days grow with N.
//  - --unique-tokens U: as many tokens as the deadline (and budget) allows,
//    ranked by the data-constrained loss (whatever --objective says): under
//    the effective-data law more tokens never raise the loss, and it is the
//    loss that lets a larger model on fewer epochs win. With --tokens: N
//    tokens, still ranked by that loss. More U never raises any candidate's
//    loss (D' and N' grow with U), so the answer's loss never rises with U.
//  - --inference-tokens T: the search runs twice. First as without it (the
//    compute-optimal answer, the "reference"); then every candidate trains
//    the tokens that reach the reference's loss (plus 1e-9 nats, so the
//    reference itself reaches it on its own days), and the answer is the
//    feasible one with the least lifetime compute 6 N D + 2 N T (N active
//    parameters). A candidate too small to reach that loss is infeasible
//    (its tokens are kUnreachableTokens, its days astronomically many).
//
// A pruning bound must respect: for --tokens and --inference-tokens the
// tokens of a candidate do not depend on its plan, so days grow with the
// iteration time, as under the tokens rule; for --unique-tokens the tokens
// grow with the plan's throughput and the loss falls with them, as under
// --objective loss.
#ifndef LLMPLAN_PLANNER_SEARCH_OBJECTIVE_H_
#define LLMPLAN_PLANNER_SEARCH_OBJECTIVE_H_

#include "reports/plan_report_table.h"
#include "scaling/law.h"
#include "scaling/objectives.h"
#include "simulator/model.h"
#include "base/status.h"

namespace llmplan::planner {

struct SearchOptions;
struct Candidate;

// The objective's inputs; zero: off.
struct TrainingObjective {
  double tokens = 0;            // --tokens: tokens every candidate trains
  double unique_tokens = 0;     // --unique-tokens: distinct tokens available
  double inference_tokens = 0;  // --inference-tokens: lifetime inference demand
  // Serving MFU for the dollars of inference (--serving-mfu; 0: FLOPs only):
  // 2 N T / (GPU peak x serving_mfu) GPU-seconds at the cluster's price.
  double serving_mfu = 0;
  // Set by the inference search's second pass: the loss every candidate
  // trains to, and the reference model (added to the grid).
  double target_loss = 0;
  bool has_reference_model = false;
  simulator::Model reference_model;
};

// Tokens standing for "never reaches the target loss" (finite, so days and
// dollars stay finite; training_days' 1e300 convention).
inline constexpr double kUnreachableTokens = 1e300;

// The compute-optimal answer the inference search matched (present only
// with --inference-tokens and an answer), and the formula's optimum: a
// table the reports write (reports/plan_report_table.h).
using reports::InferenceReference;

// InvalidArgument naming the flag when a count is negative or not finite,
// or --inference-tokens is combined with --tokens or --unique-tokens.
Status check_training_objective(const TrainingObjective& t);

// Whether a candidate trains as many tokens as the deadline allows (the
// loss objective or --unique-tokens, without --tokens or a target loss; never
// a pinned model).
bool trains_to_deadline(const SearchOptions& options);

// The tokens a candidate trains when they do not depend on the plan:
// --tokens, the target loss's tokens (kUnreachableTokens when it cannot
// reach it), else the tokens rule. `n_active`: active parameters.
double candidate_tokens(const SearchOptions& options, const simulator::Model& m, double n_active);

// The loss that ranks candidates: the data-constrained loss with
// --unique-tokens (the parameters the law sees: the MoE term's effective
// count), else the law's (MoE) loss; `n_active`: active parameters.
double objective_loss(const SearchOptions& options, const simulator::Model& m, double n_active,
                      double tokens);

// Fills the candidate's objective numbers (epochs, repeat penalty, lifetime
// FLOPs) from its tokens.
void fill_objective(const SearchOptions& options, Candidate* c);

// Whether `c` ranks above `b` (both feasible): the least lifetime FLOPs
// (target loss set); the lowest loss (--objective loss, --unique-tokens, an
// MoE model); else the most parameters. Ties: neither.
bool better_candidate(const SearchOptions& options, const Candidate& c, const Candidate& b);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_SEARCH_OBJECTIVE_H_

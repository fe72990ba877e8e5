// Training objectives beyond compute-optimal (issue 29): the loss of a
// model trained on repeated data, and the model that reaches a loss with the
// least lifetime (training + inference) compute. Pure functions of a
// Chinchilla-form law (scaling/law.h); thread-safe.
//
//  - Data-constrained loss (Muennighoff et al. 2023, "Scaling Data-Constrained
//    Language Models", arXiv:2305.16264, the data-constrained law of its
//    Section 3): L = E + A / N'^alpha + B / D'^beta with the effective data
//      D' = U_D + U_D R_D* (1 - exp(-R_D / R_D*)),  R_D = max(D / U_D - 1, 0)
//    (U_D unique tokens, R_D repetitions beyond the first epoch) and the
//    effective parameters
//      N' = U_N + U_N R_N* (1 - exp(-R_N / R_N*)),
//      U_N = min(N, N_opt(U_D)),  R_N = max(N / U_N - 1, 0)
//    where N_opt(U_D) is the law's compute-optimal size for U_D tokens
//    (Hoffmann et al. 2022 eq. 4: N = G (U_D G)^(beta/alpha)).
//  - Lifetime compute (Sardana et al. 2024, "Beyond Chinchilla-Optimal:
//    Accounting for Inference in Language Model Scaling Laws",
//    arXiv:2401.00448): 6 N D for training plus 2 N T for T inference tokens;
//    for a target loss l, D(N) is the D with L(N, D) = l, and the answer
//    minimises 6 N D(N) + 2 N T over N.
#ifndef LLMPLAN_SCALING_OBJECTIVES_H_
#define LLMPLAN_SCALING_OBJECTIVES_H_

#include "scaling/law.h"

namespace llmplan::scaling {

// The decay constants of repeated data and excess parameters fitted by
// Muennighoff et al. 2023: R_D* = 15.387756, R_N* = 5.309743, read from the
// authors' repository (huggingface/datablations, README "Parametric Fit",
// the constants of the paper's data-constrained fit; the paper text rounds
// them to 15.4 and 5.3). Fitted on C4 with GPT-2 tokens, models up to 9B
// parameters, up to 900B training tokens, up to about 1,500 epochs.
struct DataConstrainedConstants {
  double r_d_star = 15.387756;
  double r_n_star = 5.309743;
};
inline constexpr const char* kDataConstrainedSource =
    "Muennighoff et al. 2023, Scaling Data-Constrained Language Models (arXiv:2305.16264), "
    "Section 3 data-constrained law; R_D* 15.387756, R_N* 5.309743 read from the authors' "
    "repository huggingface/datablations README 'Parametric Fit'";

// U + U r* (1 - exp(-r / r*)), r = max(total / unique - 1, 0): the effective
// count of `total` uses of `unique` distinct items (tokens, or parameters).
// `total` itself when total <= unique. REQUIRES: unique > 0, r_star > 0.
double effective_repeats(double total, double unique, double r_star);

// The law's compute-optimal N for `tokens` (Hoffmann et al. eq. 4):
// G (tokens G)^(beta/alpha), G = (alpha A / (beta B))^(1/(alpha+beta)).
double compute_optimal_params(const LossLaw& law, double tokens);

// The terms of the data-constrained loss of a model of `n_params`
// parameters trained on `tokens` tokens drawn from `unique_tokens` distinct.
struct DataConstrainedLoss {
  double loss = 0;               // E + A / N'^alpha + B / D'^beta
  double effective_params = 0;   // N'
  double effective_tokens = 0;   // D'
  double epochs = 0;             // tokens / unique_tokens
  // loss minus the loss of the same N and D on `tokens` distinct tokens (>= 0).
  double repeat_penalty = 0;
};
// REQUIRES: every count > 0, valid law.
DataConstrainedLoss data_constrained_loss(const LossLaw& law, double n_params, double tokens,
                                          double unique_tokens,
                                          const DataConstrainedConstants& k = {});

// The tokens with which a model of `n_params` parameters reaches `target`
// under law.loss: (B / (target - E - A / N^alpha))^(1/beta); +infinity when
// the model cannot reach it (target - E - A / N^alpha <= 0).
double tokens_for_loss(const LossLaw& law, double n_params, double target);

// 6 N D + 2 N T (training plus inference FLOPs).
inline double lifetime_flops(double n_params, double tokens, double inference_tokens) {
  return 6.0 * n_params * tokens + 2.0 * n_params * inference_tokens;
}

// The (N, D) reaching `target` with the least lifetime compute for
// `inference_tokens` T (the formula alone; the planner simulates the
// candidates instead): the minimum of 6 N D(N) + 2 N T over N, found by a
// golden-section search in log N (the function is unimodal there). With T =
// 0 it is the compute-optimal (N, D) of that loss. InvalidArgument when
// target <= E or T < 0 or either is not finite.
struct LifetimeOptimum {
  double n_params = 0;
  double tokens = 0;
  double flops = 0;  // lifetime_flops(n_params, tokens, T)
};
Result<LifetimeOptimum> lifetime_optimal(const LossLaw& law, double target, double inference_tokens);

}  // namespace llmplan::scaling

#endif  // LLMPLAN_SCALING_OBJECTIVES_H_

// Compute-optimal allocation: for a training compute budget C (in FLOPs,
// counted as C = 6 N D), which model size N and token count D give the
// lowest predicted loss, and the inverses (the budget, and its split, at which
// a given N or D is the optimal choice).
//
// Two rules:
//  - kLaw: minimise the law's L(N, D) subject to 6 N D = C. Closed form
//      N_opt = G (C/6)^a,  D_opt = (C/6)^b / G,
//      G = (alpha A / (beta B))^(1/(alpha+beta)),
//      a = beta/(alpha+beta),  b = alpha/(alpha+beta)
//    (Hoffmann et al. 2022, eq. 4 and Appendix D.2).
//  - kTokensPerParam20: the rule of thumb D = 20 N, so N = sqrt(C/120). The
//    law is then only used to predict the loss.
//
// All functions are pure and thread-safe.
#ifndef LLMPLAN_SCALING_OPTIMAL_H_
#define LLMPLAN_SCALING_OPTIMAL_H_

#include <string>
#include <string_view>

#include "scaling/law.h"
#include "base/status.h"

namespace llmplan::scaling {

inline constexpr double kChinchillaTokensPerParam = 20.0;

enum class AllocationRule { kLaw, kTokensPerParam20 };

// "law" or "chinchilla-20".
const char* to_string(AllocationRule rule);
// Parses "law" / "chinchilla-20"; InvalidArgument listing the spellings.
Result<AllocationRule> parse_allocation_rule(std::string_view text);

// How a compute budget is split. `flops` = 6 * n_params * n_tokens always
// (below the requested budget only when both limits bind).
struct Allocation {
  AllocationRule rule = AllocationRule::kLaw;
  double flops = 0;
  double n_params = 0;
  double n_tokens = 0;
  double loss = 0;                 // law.loss(n_params, n_tokens)
  bool limited_by_params = false;  // AllocationLimits::max_params bound N
  bool limited_by_tokens = false;  // AllocationLimits::max_tokens bound D

  double tokens_per_param() const { return n_tokens / n_params; }
};

// Optional caps on the split, e.g. a data set of only max_tokens tokens, or
// the largest model that fits. Zero means no cap.
struct AllocationLimits {
  double max_params = 0;
  double max_tokens = 0;
};

// The compute-optimal exponents of a law: N_opt grows as C^a, D_opt as C^b,
// a + b = 1. NaN when alpha + beta <= 0 (a degenerate fitted law).
struct FrontierExponents {
  double a = 0;
  double b = 0;
};
FrontierExponents frontier_exponents(const LossLaw& law);

// The allocation of `flops` by `rule`. With limits, the loss-optimal split
// under them: L along 6ND = C is convex in log N, so the capped optimum is
// the unconstrained one clamped to N <= max_params and
// D = C/(6N) <= max_tokens; if both caps bind, N = max_params,
// D = max_tokens and less than the whole budget is spent.
// InvalidArgument when flops or a limit is not positive and finite, or the
// law fails validate().
Result<Allocation> optimal_for_compute(const LossLaw& law, double flops, AllocationRule rule,
                                       const AllocationLimits& limits = {});

// The inverse for a fixed model: the budget C at which `n_params` is the
// optimal size under `rule`, with its D (kLaw: C = 6 (N/G)^(1/a);
// kTokensPerParam20: C = 120 N^2). Same errors as optimal_for_compute.
Result<Allocation> optimal_for_params(const LossLaw& law, double n_params, AllocationRule rule);

// The inverse for a fixed token budget: the budget C at which `n_tokens` is
// the optimal D under `rule`, with its N (kLaw: C = 6 (D G)^(1/b);
// kTokensPerParam20: N = D/20). Same errors as optimal_for_compute.
Result<Allocation> optimal_for_tokens(const LossLaw& law, double n_tokens, AllocationRule rule);

// A cluster-time budget: `gpus` devices for `days` days, each delivering
// `mfu` of its `peak_flops_per_s`. The naive budget (DESIGN.md section 6)
// has mfu = 1.
struct GpuBudget {
  std::string gpu;  // preset name, for reports only
  double gpus = 0;
  double days = 0;
  double peak_flops_per_s = 0;
  double mfu = 1.0;
};

// gpus * days * 86400 * peak_flops_per_s * mfu. InvalidArgument naming the
// field when one is not positive and finite or mfu > 1, or when the product
// overflows to infinity ("days: ...").
Result<double> budget_flops(const GpuBudget& budget);

}  // namespace llmplan::scaling

#endif  // LLMPLAN_SCALING_OPTIMAL_H_

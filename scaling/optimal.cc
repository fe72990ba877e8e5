#include "scaling/optimal.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "base/name_table.h"

namespace llmplan::scaling {
namespace {

// OK when `value` is positive and finite; otherwise names `what`.
Status check_positive(const char* what, double value) {
  if (std::isfinite(value) && value > 0) return Status();
  std::ostringstream m;
  m << what << ": must be positive and finite, got " << value;
  return Status::invalid_argument(m.str());
}

// G = (alpha A / (beta B))^(1/(alpha+beta)). REQUIRES: a valid law.
double frontier_coefficient(const LossLaw& law) {
  return std::pow(law.alpha * law.A / (law.beta * law.B), 1 / (law.alpha + law.beta));
}

// The unconstrained optimal N for `flops` under `rule`.
double preferred_params(const LossLaw& law, double flops, AllocationRule rule) {
  if (rule == AllocationRule::kTokensPerParam20) {
    return std::sqrt(flops / (6 * kChinchillaTokensPerParam));
  }
  return frontier_coefficient(law) * std::pow(flops / 6, frontier_exponents(law).a);
}

// The allocation of N parameters and D tokens. InvalidArgument naming `what`
// (the input it was derived from) when N, D, the compute or the loss is not
// a finite positive number: an input so large (e.g. --params 1e300) that the
// compute overflows is an error, never a null in the output.
Result<Allocation> make_allocation(const LossLaw& law, AllocationRule rule, double n_params,
                                   double n_tokens, const char* what, double input) {
  Allocation out;
  out.rule = rule;
  out.n_params = n_params;
  out.n_tokens = n_tokens;
  out.flops = 6 * n_params * n_tokens;
  out.loss = law.loss(n_params, n_tokens);
  for (double x : {out.n_params, out.n_tokens, out.flops, out.loss}) {
    if (!(std::isfinite(x) && x > 0)) {
      std::ostringstream m;
      m << what << ": " << input
        << " is beyond what the law can allocate (parameters, tokens or compute overflow)";
      return Status::invalid_argument(m.str());
    }
  }
  return out;
}

}  // namespace

constexpr Named<AllocationRule> kAllocationRuleNames[] = {
    {"law", AllocationRule::kLaw},
    {"chinchilla-20", AllocationRule::kTokensPerParam20},
};

const char* to_string(AllocationRule rule) { return name_in(kAllocationRuleNames, rule); }

Result<AllocationRule> parse_allocation_rule(std::string_view text) {
  AllocationRule rule;
  if (parse_in(kAllocationRuleNames, text, &rule)) return rule;
  return Status::invalid_argument("unknown allocation rule \"" + std::string(text) +
                                  "\" (expected " + names_text(kAllocationRuleNames) + ")");
}

FrontierExponents frontier_exponents(const LossLaw& law) {
  const double sum = law.alpha + law.beta;
  if (!(sum > 0)) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    return {nan, nan};
  }
  return {law.beta / sum, law.alpha / sum};
}

Result<Allocation> optimal_for_compute(const LossLaw& law, double flops, AllocationRule rule,
                                       const AllocationLimits& limits) {
  LLMPLAN_RETURN_IF_ERROR(validate(law));
  LLMPLAN_RETURN_IF_ERROR(check_positive("flops", flops));
  if (limits.max_params != 0)
    LLMPLAN_RETURN_IF_ERROR(check_positive("max_params", limits.max_params));
  if (limits.max_tokens != 0)
    LLMPLAN_RETURN_IF_ERROR(check_positive("max_tokens", limits.max_tokens));

  double n_params = preferred_params(law, flops, rule);
  bool by_params = false, by_tokens = false;
  // The token cap is a lower bound on N (D = C/(6N) <= max_tokens).
  if (limits.max_tokens > 0 && flops / (6 * n_params) > limits.max_tokens) {
    n_params = flops / (6 * limits.max_tokens);
    by_tokens = true;
  }
  if (limits.max_params > 0 && n_params > limits.max_params) {
    n_params = limits.max_params;
    by_params = true;
    by_tokens = false;
  }
  double n_tokens = flops / (6 * n_params);
  if (limits.max_tokens > 0 && n_tokens > limits.max_tokens) {
    n_tokens = limits.max_tokens;  // both caps bind: the budget cannot be spent
    by_tokens = true;
  }
  LLMPLAN_ASSIGN_OR_RETURN(Allocation out,
                           make_allocation(law, rule, n_params, n_tokens, "flops", flops));
  out.limited_by_params = by_params;
  out.limited_by_tokens = by_tokens;
  return out;
}

Result<Allocation> optimal_for_params(const LossLaw& law, double n_params, AllocationRule rule) {
  LLMPLAN_RETURN_IF_ERROR(validate(law));
  LLMPLAN_RETURN_IF_ERROR(check_positive("params", n_params));
  if (rule == AllocationRule::kTokensPerParam20) {
    return make_allocation(law, rule, n_params, kChinchillaTokensPerParam * n_params, "params",
                           n_params);
  }
  const double c_over_6 =
      std::pow(n_params / frontier_coefficient(law), 1 / frontier_exponents(law).a);
  return make_allocation(law, rule, n_params, c_over_6 / n_params, "params", n_params);
}

Result<Allocation> optimal_for_tokens(const LossLaw& law, double n_tokens, AllocationRule rule) {
  LLMPLAN_RETURN_IF_ERROR(validate(law));
  LLMPLAN_RETURN_IF_ERROR(check_positive("tokens", n_tokens));
  if (rule == AllocationRule::kTokensPerParam20) {
    return make_allocation(law, rule, n_tokens / kChinchillaTokensPerParam, n_tokens, "tokens",
                           n_tokens);
  }
  const double c_over_6 =
      std::pow(n_tokens * frontier_coefficient(law), 1 / frontier_exponents(law).b);
  return make_allocation(law, rule, c_over_6 / n_tokens, n_tokens, "tokens", n_tokens);
}

Result<double> budget_flops(const GpuBudget& budget) {
  LLMPLAN_RETURN_IF_ERROR(check_positive("gpus", budget.gpus));
  LLMPLAN_RETURN_IF_ERROR(check_positive("days", budget.days));
  LLMPLAN_RETURN_IF_ERROR(check_positive("peak_flops_per_s", budget.peak_flops_per_s));
  LLMPLAN_RETURN_IF_ERROR(check_positive("mfu", budget.mfu));
  if (budget.mfu > 1) {
    std::ostringstream m;
    m << "mfu: must be at most 1, got " << budget.mfu;
    return Status::invalid_argument(m.str());
  }
  constexpr double kSecondsPerDay = 86400;
  const double flops =
      budget.gpus * budget.days * kSecondsPerDay * budget.peak_flops_per_s * budget.mfu;
  if (!std::isfinite(flops)) {
    std::ostringstream m;
    m << "days: " << budget.gpus << " GPUs x " << budget.days
      << " days x peak is beyond the largest number representable (not a budget)";
    return Status::invalid_argument(m.str());
  }
  return flops;
}

}  // namespace llmplan::scaling

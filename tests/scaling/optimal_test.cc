#include "scaling/optimal.h"

#include <gtest/gtest.h>

#include <cmath>

namespace llmplan::scaling {
namespace {

LossLaw chinchilla() { return {"chinchilla", 1.69, 406.4, 410.7, 0.34, 0.28, "", "", {}}; }
LossLaw epoch() { return {"epoch", 1.8172, 482.01, 2085.43, 0.3478, 0.3658, "", "", {}}; }

// Minimises L(N, C/(6N)) over log N by golden-section search: an
// independent check of the closed form.
double numeric_optimal_params(const LossLaw& law, double flops) {
  auto f = [&](double log_n) {
    const double n = std::exp(log_n);
    return law.loss(n, flops / (6 * n));
  };
  double lo = std::log(1e2), hi = std::log(1e18);
  const double g = (std::sqrt(5.0) - 1) / 2;
  double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
  double f1 = f(x1), f2 = f(x2);
  for (int i = 0; i < 200; ++i) {
    if (f1 < f2) {
      hi = x2, x2 = x1, f2 = f1;
      x1 = hi - g * (hi - lo), f1 = f(x1);
    } else {
      lo = x1, x1 = x2, f1 = f2;
      x2 = lo + g * (hi - lo), f2 = f(x2);
    }
  }
  return std::exp((lo + hi) / 2);
}

TEST(Optimal, ClosedFormMatchesNumericMinimum) {
  for (const LossLaw& law : {chinchilla(), epoch()}) {
    for (double flops : {1e18, 1e21, 5.76e23, 1e26}) {
      Result<Allocation> a = optimal_for_compute(law, flops, AllocationRule::kLaw);
      ASSERT_TRUE(a.ok()) << a.status().message();
      const double numeric = numeric_optimal_params(law, flops);
      EXPECT_NEAR(a->n_params / numeric, 1.0, 1e-6) << law.name << " C=" << flops;
      EXPECT_NEAR(a->flops / flops, 1.0, 1e-12);
      EXPECT_NEAR(a->n_tokens, flops / (6 * a->n_params), 1e-9 * a->n_tokens);
      EXPECT_DOUBLE_EQ(a->loss, law.loss(a->n_params, a->n_tokens));
      // The optimum: nudging N either way along 6ND = C raises the loss.
      for (double f : {0.9, 1.1}) {
        const double n = a->n_params * f;
        EXPECT_GT(law.loss(n, flops / (6 * n)), a->loss);
      }
    }
  }
}

TEST(Optimal, ChinchillaLawHandValues) {
  // G = (0.34*406.4/(0.28*410.7))^(1/0.62) = 1.344711; at Gopher's budget
  // C = 5.76e23: N = G (C/6)^(0.28/0.62) = 32.19e9, D = 2.982e12, L = 1.9307.
  Result<Allocation> a = optimal_for_compute(chinchilla(), 5.76e23, AllocationRule::kLaw);
  ASSERT_TRUE(a.ok());
  EXPECT_NEAR(a->n_params / 32.189859e9, 1.0, 1e-6);
  EXPECT_NEAR(a->n_tokens / 2.9823057e12, 1.0, 1e-6);
  EXPECT_NEAR(a->loss, 1.9307481, 1e-6);
  const FrontierExponents e = frontier_exponents(chinchilla());
  EXPECT_NEAR(e.a, 0.28 / 0.62, 1e-15);
  EXPECT_NEAR(e.b, 0.34 / 0.62, 1e-15);
}

TEST(Optimal, TwentyTokensPerParameterRule) {
  Result<Allocation> a =
      optimal_for_compute(chinchilla(), 5.76e23, AllocationRule::kTokensPerParam20);
  ASSERT_TRUE(a.ok());
  EXPECT_NEAR(a->n_params, std::sqrt(5.76e23 / 120), 1e-3);  // 69.28e9: Chinchilla's 70B
  EXPECT_NEAR(a->tokens_per_param(), 20.0, 1e-12);
  EXPECT_NEAR(a->flops / 5.76e23, 1.0, 1e-12);
  EXPECT_EQ(a->rule, AllocationRule::kTokensPerParam20);
  EXPECT_DOUBLE_EQ(a->loss, chinchilla().loss(a->n_params, a->n_tokens));
}

TEST(Optimal, InversesRoundTrip) {
  for (AllocationRule rule : {AllocationRule::kLaw, AllocationRule::kTokensPerParam20}) {
    for (const LossLaw& law : {chinchilla(), epoch()}) {
      Result<Allocation> by_n = optimal_for_params(law, 70e9, rule);
      ASSERT_TRUE(by_n.ok());
      EXPECT_DOUBLE_EQ(by_n->n_params, 70e9);
      Result<Allocation> back = optimal_for_compute(law, by_n->flops, rule);
      ASSERT_TRUE(back.ok());
      EXPECT_NEAR(back->n_params / 70e9, 1.0, 1e-9) << to_string(rule);
      EXPECT_NEAR(back->n_tokens / by_n->n_tokens, 1.0, 1e-9);

      Result<Allocation> by_d = optimal_for_tokens(law, 1.4e12, rule);
      ASSERT_TRUE(by_d.ok());
      EXPECT_DOUBLE_EQ(by_d->n_tokens, 1.4e12);
      back = optimal_for_compute(law, by_d->flops, rule);
      ASSERT_TRUE(back.ok());
      EXPECT_NEAR(back->n_tokens / 1.4e12, 1.0, 1e-9) << to_string(rule);
    }
  }
  // The 20-rule inverse by hand: C = 120 N^2.
  EXPECT_NEAR(optimal_for_params(chinchilla(), 1e9, AllocationRule::kTokensPerParam20)->flops,
              1.2e20, 1e6);
}

TEST(Optimal, TokenCapMovesComputeIntoParameters) {
  const LossLaw law = chinchilla();
  const double flops = 1e24;
  const Allocation free = *optimal_for_compute(law, flops, AllocationRule::kLaw);
  AllocationLimits limits;
  limits.max_tokens = free.n_tokens / 4;
  Result<Allocation> capped = optimal_for_compute(law, flops, AllocationRule::kLaw, limits);
  ASSERT_TRUE(capped.ok());
  EXPECT_TRUE(capped->limited_by_tokens);
  EXPECT_FALSE(capped->limited_by_params);
  EXPECT_DOUBLE_EQ(capped->n_tokens, limits.max_tokens);
  EXPECT_NEAR(capped->flops / flops, 1.0, 1e-12);
  EXPECT_GT(capped->loss, free.loss);
  // Loss-optimal among feasible splits: any larger N (smaller D) is worse.
  EXPECT_LT(capped->loss, law.loss(capped->n_params * 1.2, flops / (6 * capped->n_params * 1.2)));
  EXPECT_GT(capped->n_params, free.n_params);
}

TEST(Optimal, BothCapsBindSpendLessThanTheBudget) {
  AllocationLimits limits{1e9, 1e10};
  Result<Allocation> a = optimal_for_compute(chinchilla(), 1e24, AllocationRule::kLaw, limits);
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->limited_by_params);
  EXPECT_TRUE(a->limited_by_tokens);
  EXPECT_DOUBLE_EQ(a->n_params, 1e9);
  EXPECT_DOUBLE_EQ(a->n_tokens, 1e10);
  EXPECT_DOUBLE_EQ(a->flops, 6e19);
  // A parameter cap alone: N = cap, D takes the rest of the budget.
  a = optimal_for_compute(chinchilla(), 1e24, AllocationRule::kLaw, {1e9, 0});
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->limited_by_params);
  EXPECT_NEAR(a->n_tokens, 1e24 / 6e9, 1e3);
}

TEST(Optimal, BadInputsAreErrors) {
  EXPECT_NE(optimal_for_compute(chinchilla(), 0, AllocationRule::kLaw)
                .status()
                .message()
                .find("flops: must be positive"),
            std::string::npos);
  EXPECT_FALSE(optimal_for_compute(chinchilla(), NAN, AllocationRule::kLaw).ok());
  EXPECT_FALSE(optimal_for_compute(chinchilla(), INFINITY, AllocationRule::kLaw).ok());
  EXPECT_FALSE(optimal_for_params(chinchilla(), -1, AllocationRule::kLaw).ok());
  EXPECT_FALSE(optimal_for_tokens(chinchilla(), 0, AllocationRule::kLaw).ok());
  EXPECT_NE(optimal_for_compute(chinchilla(), 1e20, AllocationRule::kLaw, {-5, 0})
                .status()
                .message()
                .find("max_params"),
            std::string::npos);
  LossLaw bad = chinchilla();
  bad.alpha = 0;
  EXPECT_NE(optimal_for_compute(bad, 1e20, AllocationRule::kLaw).status().message().find("alpha"),
            std::string::npos);
  EXPECT_EQ(parse_allocation_rule("chinchilla-20").value(), AllocationRule::kTokensPerParam20);
  EXPECT_EQ(parse_allocation_rule("law").value(), AllocationRule::kLaw);
  EXPECT_NE(parse_allocation_rule("20").status().message().find("chinchilla-20"),
            std::string::npos);
}

// Issue 31, item 5: `optimal --params 1e300` printed "flops": null.
TEST(Optimal, OverflowingInputsAreErrors) {
  for (AllocationRule rule : {AllocationRule::kLaw, AllocationRule::kTokensPerParam20}) {
    EXPECT_EQ(optimal_for_params(chinchilla(), 1e300, rule).status().message(),
              "params: 1e+300 is beyond what the law can allocate (parameters, tokens or compute "
              "overflow)");
    EXPECT_NE(optimal_for_tokens(chinchilla(), 1e305, rule).status().message().find("tokens: 1e+305"),
              std::string::npos);
    EXPECT_TRUE(optimal_for_params(chinchilla(), 1e15, rule).ok());
  }
}

TEST(Optimal, GpuBudget) {
  // 3360 A100s (312 TFLOP/s) for 30 days at 100%: 2.717e24 FLOPs.
  GpuBudget budget{"a100-80gb", 3360, 30, 312e12, 1.0};
  EXPECT_NEAR(budget_flops(budget).value(), 2.71724544e24, 1e12);
  budget.mfu = 0.5;
  EXPECT_NEAR(budget_flops(budget).value(), 1.35862272e24, 1e12);
  budget.mfu = 1.5;
  EXPECT_NE(budget_flops(budget).status().message().find("mfu"), std::string::npos);
  budget.mfu = 1;
  budget.days = -1;
  EXPECT_NE(budget_flops(budget).status().message().find("days"), std::string::npos);
  budget.days = 30;
  budget.gpus = 0;
  EXPECT_NE(budget_flops(budget).status().message().find("gpus"), std::string::npos);
  // Every factor finite, the product not (issue 17: --days 1e308).
  budget.gpus = 512;
  budget.days = 1e308;
  EXPECT_NE(budget_flops(budget).status().message().find("days: 512 GPUs x 1e+308 days"),
            std::string::npos);
}

TEST(Optimal, DegenerateLawHasNoExponents) {
  LossLaw law = chinchilla();
  law.alpha = -0.3;
  law.beta = 0.2;
  EXPECT_TRUE(std::isnan(frontier_exponents(law).a));
}

}  // namespace
}  // namespace llmplan::scaling

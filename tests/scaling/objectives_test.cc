#include "scaling/objectives.h"

#include <gtest/gtest.h>

#include <cmath>

#include "scaling/optimal.h"
#include "tests/scaling/test_laws.h"

namespace llmplan::scaling {
namespace {

LossLaw chinchilla() { return testing::chinchilla_law("chinchilla"); }

// Muennighoff et al.'s own C4 fit, as the authors' repository lists it
// (huggingface/datablations README, "Parametric Fit": a, b, e are the logs
// of A, B, E).
LossLaw datablations_c4() {
  LossLaw l;
  l.name = "datablations-c4";
  l.A = std::exp(6.255414);
  l.B = std::exp(7.3049974);
  l.E = std::exp(0.6254804);
  l.alpha = 0.3526596;
  l.beta = 0.3526596;
  return l;
}

TEST(DataConstrained, AuthorsWorkedExample) {
  // The repository's worked example (Figure 1 right of the paper): 25B
  // unique tokens; 6.34B parameters on 242B tokens beats 8.67B on 178B.
  const LossLaw law = datablations_c4();
  EXPECT_NEAR(data_constrained_loss(law, 6.34e9, 242e9, 25e9).loss, 2.2256440889984477, 1e-9);
  EXPECT_NEAR(data_constrained_loss(law, 8.67e9, 178e9, 25e9).loss, 2.2269634075087867, 1e-9);
}

TEST(DataConstrained, EffectiveRepeats) {
  EXPECT_EQ(effective_repeats(5, 10, 15.4), 5);   // one epoch or less: every token counts
  EXPECT_EQ(effective_repeats(10, 10, 15.4), 10);
  // Many repetitions saturate at U (1 + R*).
  EXPECT_NEAR(effective_repeats(1e9 * 10, 10, 15.4), 10 * 16.4, 1e-6);
  // Four epochs (R = 3) are worth 3.71 epochs: 1 + 15.4 (1 - exp(-3/15.4)).
  EXPECT_NEAR(effective_repeats(40, 10, 15.4) / 10, 1 + 15.4 * (1 - std::exp(-3 / 15.4)), 1e-12);
  double last = 0;
  for (double total = 1; total < 1e4; total *= 1.5) {
    const double e = effective_repeats(total, 10, 15.4);
    EXPECT_GE(e, last);
    EXPECT_LE(e, total);
    last = e;
  }
}

TEST(DataConstrained, MonotoneInUniqueTokensAndNoPenaltyWithoutRepeats) {
  const LossLaw law = chinchilla();
  for (double n : {1e9, 8e9, 70e9}) {
    for (double d : {1e11, 1.5e12, 15e12}) {
      double last = 1e9;
      for (double u = d / 1000; u <= d * 4; u *= 1.3) {
        const DataConstrainedLoss l = data_constrained_loss(law, n, d, u);
        EXPECT_LE(l.loss, last + 1e-12) << n << " " << d << " " << u;
        EXPECT_GE(l.repeat_penalty, 0);
        EXPECT_NEAR(l.epochs, d / u, 1e-9 * d / u);
        last = l.loss;
      }
      // Unique data of at least D tokens: no repeats, no penalty.
      EXPECT_EQ(data_constrained_loss(law, n, d, d).repeat_penalty, 0);
      EXPECT_EQ(data_constrained_loss(law, n, d, 2 * d).repeat_penalty, 0);
    }
  }
  // A model no larger than compute-optimal for its unique data, on fresh
  // tokens: the plain law.
  const double d = 1e12;
  const double n = compute_optimal_params(law, d) / 2;
  EXPECT_NEAR(data_constrained_loss(law, n, d, d).loss, law.loss(n, d), 1e-12);
}

TEST(DataConstrained, ComputeOptimalParamsMatchesOptimalForTokens) {
  const LossLaw law = chinchilla();
  for (double d : {1e10, 1e12, 3e13}) {
    auto a = optimal_for_tokens(law, d, AllocationRule::kLaw);
    ASSERT_TRUE(a.ok());
    EXPECT_NEAR(compute_optimal_params(law, d) / a.value().n_params, 1.0, 1e-9);
  }
}

TEST(Lifetime, TokensForLossInvertsTheLaw) {
  const LossLaw law = chinchilla();
  for (double n : {1e9, 7e9, 70e9}) {
    const double d = 1.4e12;
    EXPECT_NEAR(tokens_for_loss(law, n, law.loss(n, d)) / d, 1.0, 1e-9);
  }
  // Below what infinite data reaches: unreachable.
  EXPECT_TRUE(std::isinf(tokens_for_loss(law, 1e9, law.E + law.A / std::pow(1e9, law.alpha) - 1e-9)));
  EXPECT_TRUE(std::isinf(tokens_for_loss(law, 1e9, 1.0)));
}

TEST(Lifetime, NoInferenceIsComputeOptimal) {
  const LossLaw law = chinchilla();
  auto co = optimal_for_compute(law, 1e24, AllocationRule::kLaw);
  ASSERT_TRUE(co.ok());
  auto lo = lifetime_optimal(law, co.value().loss, 0);
  ASSERT_TRUE(lo.ok());
  EXPECT_NEAR(lo.value().n_params / co.value().n_params, 1.0, 1e-4);
  EXPECT_NEAR(lo.value().tokens / co.value().n_tokens, 1.0, 1e-4);
  EXPECT_NEAR(lo.value().flops / 1e24, 1.0, 1e-6);
}

TEST(Lifetime, MoreInferenceMeansSmallerLongerTrainedAndNeverCheaper) {
  const LossLaw law = chinchilla();
  const double target = law.loss(13e9, 260e9);
  double last_n = 1e30, last_d = 0, last_f = 0;
  for (double t : {0.0, 1e10, 1e11, 1e12, 1e13, 1e14}) {
    auto lo = lifetime_optimal(law, target, t);
    ASSERT_TRUE(lo.ok());
    EXPECT_LT(lo.value().n_params, last_n * (1 + 1e-9)) << t;
    EXPECT_GT(lo.value().tokens, last_d * (1 - 1e-9)) << t;
    EXPECT_GE(lo.value().flops, last_f) << t;
    EXPECT_NEAR(law.loss(lo.value().n_params, lo.value().tokens), target, 1e-9);
    // No other N on the loss curve does better (a check of the minimiser).
    for (double f : {0.9, 0.97, 1.03, 1.1}) {
      const double n = lo.value().n_params * f;
      EXPECT_GE(lifetime_flops(n, tokens_for_loss(law, n, target), t), lo.value().flops * (1 - 1e-9));
    }
    last_n = lo.value().n_params;
    last_d = lo.value().tokens;
    last_f = lo.value().flops;
  }
  EXPECT_FALSE(lifetime_optimal(law, law.E, 1e12).ok());
  EXPECT_FALSE(lifetime_optimal(law, target, -1).ok());
}

}  // namespace
}  // namespace llmplan::scaling

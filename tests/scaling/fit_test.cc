#include "scaling/fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "scaling/loss_csv.h"

namespace llmplan::scaling {
namespace {

const LossLaw kTruth{"truth", 1.9, 520.0, 1700.0, 0.33, 0.37, "", "", {}};

// Runs on a grid of model sizes (10M..10B) and tokens-per-parameter ratios
// (2..250), with multiplicative log-normal noise of `sigma` on the loss.
std::vector<LossPoint> synthetic_points(const LossLaw& law, double sigma, uint64_t seed) {
  std::mt19937_64 engine(seed);
  auto normal = [&] {  // Box-Muller on the raw engine: the same on every platform
    const double u1 = (static_cast<double>(engine() >> 11) + 0.5) / 9007199254740992.0;
    const double u2 = (static_cast<double>(engine() >> 11) + 0.5) / 9007199254740992.0;
    return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
  };
  std::vector<LossPoint> points;
  for (int i = 0; i < 8; ++i) {
    const double n = 1e7 * std::pow(10.0, 3.0 * i / 7);
    for (int j = 0; j < 8; ++j) {
      const double d = n * 2 * std::pow(125.0, j / 7.0);
      points.push_back({n, d, law.loss(n, d) * std::exp(sigma * normal())});
    }
  }
  return points;
}

TEST(Fit, RecoversExactParametersFromNoiseFreeData) {
  Result<ScalingFit> fit = fit_loss_law(synthetic_points(kTruth, 0, 1));
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_TRUE(fit->converged) << fit->solver_report;
  EXPECT_NEAR(fit->law.E / kTruth.E, 1, 1e-5);
  EXPECT_NEAR(fit->law.A / kTruth.A, 1, 1e-4);
  EXPECT_NEAR(fit->law.B / kTruth.B, 1, 1e-4);
  EXPECT_NEAR(fit->law.alpha, kTruth.alpha, 1e-5);
  EXPECT_NEAR(fit->law.beta, kTruth.beta, 1e-5);
  EXPECT_LT(fit->objective, 1e-12);
  EXPECT_EQ(fit->n_points, 64);
  EXPECT_EQ(fit->starts, 4500);
}

TEST(Fit, RecoversKnownParametersFromNoisyData) {
  // 1% loss noise on 64 runs. Over 40 noise seeds the RMS errors were E 0.020,
  // alpha 0.0084, beta 0.0079, log A 0.13, log B 0.14, a 0.0092; the
  // tolerances are about 3.5 times those (A and B are weakly identified, as in
  // every Chinchilla-form fit; the frontier exponent a is not).
  for (uint64_t seed : {11u, 12u, 13u}) {
    Result<ScalingFit> fit = fit_loss_law(synthetic_points(kTruth, 0.01, seed));
    ASSERT_TRUE(fit.ok()) << fit.status().message();
    EXPECT_TRUE(fit->converged) << fit->solver_report;
    EXPECT_NEAR(fit->law.E, kTruth.E, 0.07) << "seed " << seed;
    EXPECT_NEAR(fit->law.alpha, kTruth.alpha, 0.03) << "seed " << seed;
    EXPECT_NEAR(fit->law.beta, kTruth.beta, 0.03) << "seed " << seed;
    EXPECT_NEAR(std::log(fit->law.A / kTruth.A), 0, 0.48) << "seed " << seed;
    EXPECT_NEAR(std::log(fit->law.B / kTruth.B), 0, 0.48) << "seed " << seed;
    EXPECT_NEAR(fit->a, kTruth.beta / (kTruth.alpha + kTruth.beta), 0.032) << "seed " << seed;
  }
}

TEST(Fit, ObjectiveIsTheSumOfHuberLossesAndIsMinimal) {
  const std::vector<LossPoint> points = synthetic_points(kTruth, 0.01, 5);
  const ScalingFit fit = fit_loss_law(points).value();
  EXPECT_NEAR(fit.objective, huber_objective(fit.law, points, 1e-3), 1e-12 * fit.objective);
  EXPECT_EQ(fit.huber_delta, 1e-3);
  // Moving any parameter away from the optimum increases the objective.
  for (double LossLaw::*field :
       {&LossLaw::E, &LossLaw::A, &LossLaw::B, &LossLaw::alpha, &LossLaw::beta}) {
    for (double f : {0.999, 1.001}) {
      LossLaw moved = fit.law;
      moved.*field *= f;
      EXPECT_GT(huber_objective(moved, points, 1e-3), fit.objective);
    }
  }
  // And it beats the law that generated the data (it is fitted to the noise).
  EXPECT_LE(fit.objective, huber_objective(kTruth, points, 1e-3));
}

TEST(Fit, HuberObjectiveByHand) {
  // A law predicting (to 1e-300) a loss of 2 everywhere.
  const LossLaw flat{"flat", 2, 1e-300, 1e-300, 1, 1, "", "", {}};
  const std::vector<LossPoint> points = {{1, 1, 2 * std::exp(0.0005)}, {1, 1, 2 * std::exp(-0.01)}};
  // |r| = 0.0005 <= delta: r^2/2; |r| = 0.01: delta (|r| - delta/2).
  EXPECT_NEAR(huber_objective(flat, points, 1e-3), 0.5 * 0.0005 * 0.0005 + 1e-3 * (0.01 - 0.0005),
              1e-15);
}

TEST(Fit, IsDeterministic) {
  const std::vector<LossPoint> points = synthetic_points(kTruth, 0.02, 3);
  FitOptions options;
  options.starts.a = {0, 10, 20};  // a smaller grid keeps the test quick
  options.starts.b = {0, 10, 20};
  ScalingFit first = fit_loss_law(points, options).value();
  ScalingFit second = fit_loss_law(points, options).value();
  first.seconds = second.seconds = 0;
  EXPECT_EQ(first.law, second.law);
  EXPECT_EQ(first.objective, second.objective);
  EXPECT_EQ(first.iterations, second.iterations);
  EXPECT_EQ(first.starts, 5 * 5 * 5 * 3 * 3);
}

TEST(Fit, BootstrapIntervalsAreDeterministicPerSeed) {
  const std::vector<LossPoint> points = synthetic_points(kTruth, 0.01, 21);
  FitOptions options;
  options.starts.a = {5, 15};
  options.starts.b = {5, 15};
  options.bootstrap_samples = 12;
  options.seed = 42;
  const ScalingFit a = fit_loss_law(points, options).value();
  const ScalingFit b = fit_loss_law(points, options).value();
  options.seed = 43;
  const ScalingFit c = fit_loss_law(points, options).value();
  EXPECT_EQ(a.bootstrap.samples, 12);
  EXPECT_EQ(a.bootstrap.seed, 42u);
  EXPECT_EQ(a.bootstrap.failed, 0);
  EXPECT_EQ(a.bootstrap.alpha.low, b.bootstrap.alpha.low);
  EXPECT_EQ(a.bootstrap.B.high, b.bootstrap.B.high);
  EXPECT_EQ(a.bootstrap.E.std_error, b.bootstrap.E.std_error);
  EXPECT_NE(a.bootstrap.alpha.low, c.bootstrap.alpha.low);
  for (const ConfidenceInterval* ci :
       {&a.bootstrap.E, &a.bootstrap.A, &a.bootstrap.B, &a.bootstrap.alpha, &a.bootstrap.beta,
        &a.bootstrap.a, &a.bootstrap.b}) {
    EXPECT_LT(ci->low, ci->high);
    EXPECT_GT(ci->std_error, 0);
  }
  // The intervals bracket the full-data estimate and (here) the truth.
  EXPECT_LE(a.bootstrap.E.low, a.law.E);
  EXPECT_GE(a.bootstrap.E.high, a.law.E);
  EXPECT_LE(a.bootstrap.alpha.low, kTruth.alpha);
  EXPECT_GE(a.bootstrap.alpha.high, kTruth.alpha);
  // Without a bootstrap there are no intervals.
  EXPECT_EQ(fit_loss_law(points, {}).value().bootstrap.samples, 0);
}

TEST(Fit, BadInputsAreErrors) {
  std::vector<LossPoint> points = synthetic_points(kTruth, 0, 1);
  std::vector<LossPoint> four(points.begin(), points.begin() + 4);
  EXPECT_EQ(fit_loss_law(four).status().message(),
            "a fit needs at least 5 points (5 unknowns), got 4");
  points[2].loss = NAN;
  EXPECT_EQ(fit_loss_law(points).status().message(),
            "point 2: loss must be positive and finite, got nan");
  points[2].loss = 3;
  points[7].n_tokens = 0;
  EXPECT_EQ(fit_loss_law(points).status().message(),
            "point 7: n_tokens must be positive and finite, got 0");
  points[7].n_tokens = 1e9;
  points[0].n_params = -1;
  EXPECT_EQ(fit_loss_law(points).status().message(),
            "point 0: n_params must be positive and finite, got -1");
  points[0].n_params = 1e8;
  FitOptions options;
  options.polish_count = 0;
  EXPECT_EQ(fit_loss_law(points, options).status().message(),
            "fit option polish_count: must be >= 1");
  options = {};
  options.starts.alpha.clear();
  EXPECT_NE(fit_loss_law(points, options).status().message().find("starts"), std::string::npos);
  options = {};
  options.confidence_level = 1;
  EXPECT_NE(fit_loss_law(points, options).status().message().find("confidence_level"),
            std::string::npos);
  // Each replicate is a refit: the count is bounded (issue 17).
  options = {};
  options.bootstrap_samples = kMaxBootstrapSamples + 1;
  EXPECT_EQ(fit_loss_law(points, options).status().message(),
            "fit option bootstrap_samples: must be from 0 to 10000, got 10001");
  // Resamples x points are bounded too (issue 31: 10,000 resamples of 10,000
  // points would take about 20 minutes); refused before any work.
  std::vector<LossPoint> many;
  while (many.size() < 1001) many.insert(many.end(), points.begin(), points.end());
  many.resize(1001);
  options = {};
  options.bootstrap_samples = 10000;
  EXPECT_EQ(fit_loss_law(many, options).status().message(),
            "bootstrap_samples: 10000 resamples of 1001 points is more than the bound of 1e7 "
            "point-fits; give at most 9990");
}

TEST(Fit, ReproducesTheEpochRefitOnChinchillaData) {
  // Besiroglu et al. 2024 on the 240 rows left after dropping the 5
  // highest-loss ones: E 1.817 +- 0.026, A 482 +- 125, B 2085 +- 1293,
  // alpha 0.348 +- 0.015, beta 0.366 +- 0.021 (standard errors).
  LossCsvOptions csv;
  csv.drop_highest_loss = 5;
  Result<LossData> data = read_loss_csv(LLMPLAN_DATA_DIR "/chinchilla/svg_extracted_data.csv", csv);
  ASSERT_TRUE(data.ok()) << data.status().message();
  ASSERT_EQ(data->points.size(), 240u);
  Result<ScalingFit> fit = fit_loss_law(data->points);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_TRUE(fit->converged) << fit->solver_report;
  EXPECT_NEAR(fit->law.E, 1.817, 0.026);
  EXPECT_NEAR(fit->law.A, 482, 125);
  EXPECT_NEAR(fit->law.B, 2085, 1293);
  EXPECT_NEAR(fit->law.alpha, 0.348, 0.015);
  EXPECT_NEAR(fit->law.beta, 0.366, 0.021);
  // Several polished starts agree on the optimum.
  EXPECT_GE(fit->polished_at_best, 2);
}

TEST(Fit, ABestFitOutsideTheLawsRangeIsRefused) {
  // Issue 48, item 11: the Chinchilla data with the model-size and FLOP
  // columns swapped fitted to beta -1.52 with "converged": true, a law that
  // --law refuses. It is an error naming the exponent.
  LossCsvOptions csv;
  csv.params_column = "Training FLOP";
  csv.flops_column = "Model Size";
  Result<LossData> data = read_loss_csv(LLMPLAN_DATA_DIR "/chinchilla/svg_extracted_data.csv", csv);
  ASSERT_TRUE(data.ok()) << data.status().message();
  Result<ScalingFit> fit = fit_loss_law(data->points);
  ASSERT_FALSE(fit.ok());
  EXPECT_EQ(fit.status().message().rfind("the best fit's beta is -1.5", 0), 0u)
      << fit.status().message();
  EXPECT_NE(fit.status().message().find("the loss does not fall as D grows"), std::string::npos)
      << fit.status().message();
  // Points whose loss rises with D (a law's B / D^beta with beta < 0).
  std::vector<LossPoint> rising = synthetic_points(kTruth, 0, 1);
  for (LossPoint& p : rising) p.loss = 1.9 + 520 / std::pow(p.n_params, 0.33) + 0.01 * std::pow(p.n_tokens, 0.1);
  fit = fit_loss_law(rising);
  ASSERT_FALSE(fit.ok());
  EXPECT_EQ(fit.status().message().rfind("the best fit's beta is -", 0), 0u) << fit.status().message();
  // The same grid from a valid law still fits (the check refuses only what it must).
  EXPECT_TRUE(fit_loss_law(synthetic_points(kTruth, 0, 1)).ok());
}

}  // namespace
}  // namespace llmplan::scaling

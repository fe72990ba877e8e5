// Predicted losses with the uncertainty their law's source publishes
// (LossLaw::uncertainty): an interval for one prediction, and whether the
// difference of two predictions under the same law exceeds that uncertainty.
//
// The losses of two models under one law are strongly correlated (an error
// in E, A or alpha moves both), so differences are judged with paired
// draws: each parameter draw predicts both losses and the interval is taken
// over the draws' differences, not by overlapping the marginal intervals.
//   - standard_errors: kLossDraws draws of the constants, E, alpha and beta
//     normal with their standard errors, A and B log-normal (log-scale sd =
//     se / value, so they stay positive), independent: the sources publish
//     no covariance, which makes the spread an overstatement (correlated
//     errors partly cancel), so "indistinguishable" errs on the cautious side.
//   - fit_rmse: the source's held-out prediction error sigma: the interval is
//     loss +- z sigma; a difference exceeds it when |difference| > z sqrt(2)
//     sigma (the two predictions' errors taken as independent: again the
//     cautious side). Not a parameter interval, and valid within the fitted
//     range only (the caveats say how far beyond it an answer lies).
//   - unknown: no interval; comparisons are not judged.
// Draws are seeded with a constant, so results are identical on every run
// and thread count. Pure and re-entrant.
#ifndef LLMPLAN_SCALING_LOSS_INTERVAL_H_
#define LLMPLAN_SCALING_LOSS_INTERVAL_H_

#include <string>

#include "scaling/law.h"

namespace llmplan::scaling {

// Central probability of every interval (P5-P95) and its normal quantile.
inline constexpr double kLossIntervalLevel = 0.9;
inline constexpr double kLossIntervalZ = 1.6448536269514722;
// Parameter draws per judgement (each a handful of pow calls per model).
inline constexpr int kLossDraws = 1000;
inline constexpr unsigned long long kLossDrawSeed = 29;

// A model to predict: active parameters, experts / top_k (1: dense), tokens.
struct LossQuery {
  double n_active = 0;
  double expansion = 1;
  double tokens = 0;
};

struct LossInterval {
  bool known = false;
  double low = 0, high = 0;
  double level = kLossIntervalLevel;
  std::string method;  // one line: how the interval was made, or why none
};

struct LossComparison {
  double difference = 0;  // loss(a) - loss(b) at the law's constants
  bool known = false;     // false: the law has no published uncertainty
  double low = 0, high = 0;  // interval of the difference (paired)
  bool exceeds = false;      // known and 0 lies outside [low, high]
  std::string method;
};

LossInterval loss_interval(const LossLaw& law, const LossQuery& q);
LossComparison compare_losses(const LossLaw& law, const LossQuery& a, const LossQuery& b);

}  // namespace llmplan::scaling

#endif  // LLMPLAN_SCALING_LOSS_INTERVAL_H_

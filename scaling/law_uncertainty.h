// The uncertainty a loss law's source publishes for it (scaling/law.h
// LossLaw::uncertainty), as read from a law file: what scaling/loss_interval.h
// turns into intervals of predicted losses and of their differences.
#ifndef LLMPLAN_SCALING_LAW_UNCERTAINTY_H_
#define LLMPLAN_SCALING_LAW_UNCERTAINTY_H_

#include <string>

namespace llmplan::scaling {

enum class UncertaintyKind {
  // The source publishes none (Chinchilla's Approach 3): no interval.
  kUnknown,
  // Standard errors of E, A, B, alpha, beta (Epoch's refit; the bootstrap
  // summary of `llmplan fit --bootstrap`); no covariance.
  kStandardErrors,
  // The root-mean-square error of the law's predictions on held-out runs
  // (Ludziejewski et al. 2025 publish no parameter errors).
  kFitRmse,
};

struct LawUncertainty {
  UncertaintyKind kind = UncertaintyKind::kUnknown;
  double se_E = 0, se_A = 0, se_B = 0, se_alpha = 0, se_beta = 0;  // kStandardErrors
  double rmse = 0;                                                  // kFitRmse
  std::string source;  // where the numbers (or their absence) come from
  friend bool operator==(const LawUncertainty&, const LawUncertainty&) = default;
};

// "unknown", "standard_errors", "fit_rmse".
const char* to_string(UncertaintyKind kind);

}  // namespace llmplan::scaling

#endif  // LLMPLAN_SCALING_LAW_UNCERTAINTY_H_

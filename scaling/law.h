// The Chinchilla-form loss law L(N, D) = E + A / N^alpha + B / D^beta.
#ifndef LLMPLAN_SCALING_LAW_H_
#define LLMPLAN_SCALING_LAW_H_

#include <cmath>
#include <string>

#include "simulator/status.h"

namespace llmplan::scaling {

// Predicted final pre-training loss of a model with N parameters trained on
// D tokens. A plain value; `source` says where the constants come from.
struct LossLaw {
  std::string name;
  double E = 0, A = 0, B = 0, alpha = 0, beta = 0;
  std::string source;

  // REQUIRES: n_params > 0, n_tokens > 0.
  double loss(double n_params, double n_tokens) const {
    return E + A / std::pow(n_params, alpha) + B / std::pow(n_tokens, beta);
  }
  friend bool operator==(const LossLaw&, const LossLaw&) = default;
};

// OK when E >= 0 and A, B, alpha, beta are positive and finite;
// InvalidArgument naming the law and the constant otherwise.
Status validate(const LossLaw& law);

}  // namespace llmplan::scaling

#endif  // LLMPLAN_SCALING_LAW_H_

#include "scaling/joint_moe.h"

#include <cmath>

namespace llmplan::scaling {

double joint_expert_transform(const JointMoeTerm& term, double experts) {
  const double shift = 1.0 / (1.0 / term.e_start - 1.0 / term.e_max);
  return 1.0 / (1.0 / (experts - 1.0 + shift) + 1.0 / term.e_max);
}

ChinchillaForm joint_reduce(const JointMoeTerm& term, double experts) {
  const double e_hat = joint_expert_transform(term, experts);
  const double l = std::log(e_hat);
  ChinchillaForm f;
  f.m = term.a * std::pow(e_hat, term.delta);
  f.mu = term.alpha + term.gamma * l;
  f.n = term.b * std::pow(e_hat, term.omega);
  f.nu = term.beta + term.zeta * l;
  f.c = term.c;
  return f;
}

double joint_loss(const JointMoeTerm& term, double n_active, double experts, double n_tokens) {
  const ChinchillaForm f = joint_reduce(term, experts);
  return f.c + f.m * std::pow(n_active, f.mu) + f.n * std::pow(n_tokens, f.nu);
}

}  // namespace llmplan::scaling

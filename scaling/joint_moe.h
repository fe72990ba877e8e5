// The joint dense/MoE scaling law of Ludziejewski et al. 2025 ("Joint MoE
// Scaling Laws: Mixture of Experts Can Be Memory Efficient", ICML 2025,
// arXiv:2502.05172, eq. 6 with the expert transform of eq. 4):
//
//   L(N_act, D, E) = a Ê^delta N_act^(alpha + gamma ln Ê)
//                  + b Ê^omega D^(beta + zeta ln Ê) + c,
//   1/Ê = 1 / (E - 1 + (1/E_start - 1/E_max)^-1) + 1/E_max,
//
// N_act active parameters (embeddings included), D training tokens, E the
// number of experts of a top-1 (Switch) MoE with experts as wide as the dense
// FFN (E = 1: the dense model). Note the signs: alpha, beta are the fitted
// (negative) exponents themselves, as in the paper's Table 3.
//
// For a fixed E the law is Chinchilla's form (the paper's Table 4):
// m(E) = a Ê^delta, mu(E) = alpha + gamma ln Ê, n(E) = b Ê^omega,
// nu(E) = beta + zeta ln Ê; at E = 1 it is the law's dense part.
#ifndef LLMPLAN_SCALING_JOINT_MOE_H_
#define LLMPLAN_SCALING_JOINT_MOE_H_

#include <string>

namespace llmplan::scaling {

struct JointMoeTerm {
  bool present = false;
  double a = 0, alpha = 0, delta = 0, gamma = 0;
  double b = 0, beta = 0, omega = 0, zeta = 0;
  double e_start = 0, e_max = 0;
  double c = 0;
  // The fitted range (0: not stated): the largest active and total
  // parameter counts, the most experts and the most tokens per active
  // parameter of the runs the law was fitted on.
  double max_fitted_active_params = 0;
  double max_fitted_total_params = 0;
  double max_fitted_experts = 0;
  double max_fitted_tokens_per_param = 0;
  std::string source;
  std::string assumption;  // data, tokenizer, routing: one line for reports
  friend bool operator==(const JointMoeTerm&, const JointMoeTerm&) = default;
};

// The law reduced to Chinchilla's form for `experts` (>= 1): loss =
// c + m N^mu + n D^nu (mu, nu negative).
struct ChinchillaForm {
  double m = 0, mu = 0, n = 0, nu = 0, c = 0;
};

// Ê of eq. 4. REQUIRES: term.present, experts >= 1, E_max > E_start > 0.
double joint_expert_transform(const JointMoeTerm& term, double experts);
ChinchillaForm joint_reduce(const JointMoeTerm& term, double experts);
// L(n_active, n_tokens, experts). REQUIRES: n_active, n_tokens > 0.
double joint_loss(const JointMoeTerm& term, double n_active, double experts, double n_tokens);

}  // namespace llmplan::scaling

#endif  // LLMPLAN_SCALING_JOINT_MOE_H_

// The Chinchilla-form loss law L(N, D) = E + A / N^alpha + B / D^beta, and
// the measured (N, D, loss) points such laws are fitted to.
//
// Related headers: scaling/optimal.h (compute-optimal allocation),
// scaling/flops.h (training FLOPs), scaling/fit.h (fitting a law to points),
// scaling/loss_csv.h (reading points from CSV), scaling/law_json.h (JSON).
#ifndef LLMPLAN_SCALING_LAW_H_
#define LLMPLAN_SCALING_LAW_H_

#include <cmath>
#include <string>
#include <string_view>

#include "scaling/joint_moe.h"
#include "scaling/law_uncertainty.h"
#include "base/status.h"

namespace llmplan::scaling {

// The mixture-of-experts part of a law: Clark et al. 2022 ("Unified Scaling
// Laws for Routed Language Models", ICML 2022, arXiv:2202.01169) fit the
// loss of routed models with E experts on a dense base of N parameters as
//   log10 L(N, E) = a log10 N + b log10 Ê + c log10 N log10 Ê + d,
//   Ê = 1 / (1 / (E - 1 + (1/(E_start - 1) - 1/E_max)^-1) + 1/E_max) + 1
// (their eq. 2 with the saturating transform of E), and define the effective
// parameter count N̄: the dense size with the same loss, L(N̄, 1) = L(N, E).
// The law's dense part then predicts the MoE model's loss from N̄:
// L_moe(N_active, E, D) = E_dense + A / N̄^alpha + B / D^beta. d cancels in
// N̄ and is kept for the record only. `present` false: a dense law.
struct MoeLawTerm {
  bool present = false;
  double a = 0, b = 0, c = 0, d = 0;
  double e_start = 0, e_max = 0;
  // The range the term was fitted on (0: not stated): the dense base size
  // (active parameters) and the expansion E.
  double max_fitted_active_params = 0;
  double max_fitted_expansion = 0;
  std::string source;
  // What the fit assumed (data, tokenizer, routing), one line for reports.
  std::string assumption;
  // False: the constants were not checked against the paper (reports say so).
  bool verified = true;
  friend bool operator==(const MoeLawTerm&, const MoeLawTerm&) = default;
};

// Predicted final pre-training loss of a model with N parameters trained on
// D tokens. A plain value; `source` says where the constants come from.
struct LossLaw {
  std::string name;
  double E = 0, A = 0, B = 0, alpha = 0, beta = 0;
  std::string source;
  std::string description;  // one line for preset listings; may be empty

  // REQUIRES: n_params > 0, n_tokens > 0.
  double loss(double n_params, double n_tokens) const {
    return E + A / std::pow(n_params, alpha) + B / std::pow(n_tokens, beta);
  }
  // MoE models: see MoeLawTerm (absent: the law ranks dense models only).
  MoeLawTerm moe;
  // Or a joint dense/MoE law (scaling/joint_moe.h); then E, A, B, alpha,
  // beta are its reduction at one expert (joint_reduce(joint, 1)), so the
  // dense formulas (loss, the compute-optimal allocation) are the joint
  // law's dense part. At most one of moe and joint is present.
  JointMoeTerm joint = {};
  // What the law's source publishes about its uncertainty.
  LawUncertainty uncertainty = {};
  // Whether the law can rank MoE models (an MoE or a joint term).
  bool ranks_moe() const { return moe.present || joint.present; }

  // The MoE model's loss: `n_active` parameters per token, `expansion` =
  // experts / top_k (Clark et al.'s E for top-1 routing; 1 = dense), trained
  // on `n_tokens`: loss(effective_params(...), n_tokens); with a joint term,
  // joint_loss(joint, n_active, expansion, n_tokens). For expansion 1, or a
  // law without an MoE term, exactly loss(n_active, n_tokens).
  // REQUIRES: n_active > 0, n_tokens > 0, expansion >= 1.
  double moe_loss(double n_active, double expansion, double n_tokens) const;
  friend bool operator==(const LossLaw&, const LossLaw&) = default;
};

// Clark et al.'s saturating transform Ê of the expansion E (see
// MoeLawTerm). REQUIRES: term.present, valid term, expansion >= 1.
double expert_transform(const MoeLawTerm& term, double expansion);

// The effective (dense-equivalent) parameter count N̄ of a model with
// `n_active` parameters per token and `expansion` = experts / top_k under
// `term`: the solution of L(N̄, 1) = L(n_active, E) in Clark et al.'s law,
//   log10 N̄ = ((a + c lÊ) log10 N + b (lÊ - lÊ1)) / (a + c lÊ1),
// lÊ = log10 Ê(E), lÊ1 = log10 Ê(1). n_active itself when the term is absent
// or expansion <= 1. REQUIRES: n_active > 0.
double effective_params(const MoeLawTerm& term, double n_active, double expansion);

// One measured training run: a model of `n_params` parameters trained on
// `n_tokens` tokens reached final loss `loss` (nats per token).
struct LossPoint {
  double n_params = 0;
  double n_tokens = 0;
  double loss = 0;
  friend bool operator==(const LossPoint&, const LossPoint&) = default;
};

// Magnitude bounds of a law's constants, generous against every published
// fit: E is a loss in nats per token (a uniform guess over 2^24 tokens costs
// 16.6; published E 1.69-1.82), A and B are 406-2,085 in the Chinchilla fits
// and their refits, and alpha, beta 0.07-0.37 (Kaplan et al. 2020's 0.076 and
// 0.095 the smallest). Outside them a law overflows a loss or a
// compute-optimal size (A = 1e308, alpha = 1e-300) or ranks nothing
// (alpha = 100), so a file holding one is refused at read time.
inline constexpr double kLawMaxE = 100;
inline constexpr double kLawMaxCoefficient = 1e12;
inline constexpr double kLawMinExponent = 0.01;
inline constexpr double kLawMaxExponent = 2;
inline constexpr double kLawMaxMoeConstant = 100;
inline constexpr double kLawMaxExpansion = 1e6;

// OK when 0 <= E <= kLawMaxE, 0 < A, B <= kLawMaxCoefficient,
// kLawMinExponent <= alpha, beta <= kLawMaxExponent, and, with an MoE term,
// |a|, |b|, |c|, |d| <= kLawMaxMoeConstant, a + c log10 E_start < 0 (loss
// falls with N), 1 < E_start < E_max <= kLawMaxExpansion, and the fitted
// ranges >= 0; InvalidArgument naming the law and the constant ("law x:
// alpha must be >= 0.01 and <= 2") otherwise.
Status validate(const LossLaw& law);

// Reads a JSON file holding one law object (the format of scaling/law_json.h,
// e.g. one entry of presets/laws.json), or a result of `llmplan fit`
// (fit.json: see law_from_fit_json). NotFound/IoError/ParseError name the
// file; field errors name the file and field. The file is read with
// read_input_file (base/input_file.h: at most 16 MiB). Implemented in
// law_json.cc. Thread-safe.
Result<LossLaw> read_law_file(const std::string& path);
// The same for text in memory; `source_name` names it in messages.
Result<LossLaw> parse_law_text(std::string_view text, const std::string& source_name);

}  // namespace llmplan::scaling

#endif  // LLMPLAN_SCALING_LAW_H_

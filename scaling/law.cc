#include "scaling/law.h"

#include <cmath>
#include <sstream>
#include <utility>

namespace llmplan::scaling {

Status validate(const LossLaw& law) {
  auto bad = [&](const char* field, const char* why) {
    return Status::invalid_argument("law " + law.name + ": " + field + " " + why);
  };
  // Magnitude bounds (kLawBounds in law.h), so that no law read from a file
  // overflows a loss, a compute-optimal size or the search built on them.
  auto out_of = [](double x, double lo, double hi, bool lo_open) {
    return !std::isfinite(x) || (lo_open ? !(x > lo) : !(x >= lo)) || !(x <= hi);
  };
  auto range = [&](const char* field, double lo, double hi, bool lo_open) {
    std::ostringstream m;
    m << "must be " << (lo_open ? "> " : ">= ") << lo << " and <= " << hi;
    return Status::invalid_argument("law " + law.name + ": " + field + " " + m.str());
  };
  if (out_of(law.E, 0, kLawMaxE, false)) return range("E", 0, kLawMaxE, false);
  if (out_of(law.A, 0, kLawMaxCoefficient, true)) return range("A", 0, kLawMaxCoefficient, true);
  if (out_of(law.B, 0, kLawMaxCoefficient, true)) return range("B", 0, kLawMaxCoefficient, true);
  if (out_of(law.alpha, kLawMinExponent, kLawMaxExponent, false)) {
    return range("alpha", kLawMinExponent, kLawMaxExponent, false);
  }
  if (out_of(law.beta, kLawMinExponent, kLawMaxExponent, false)) {
    return range("beta", kLawMinExponent, kLawMaxExponent, false);
  }
  if (law.joint.present) {
    const JointMoeTerm& j = law.joint;
    if (law.moe.present) return bad("moe", "and joint_moe cannot both be given");
    for (auto [field, x] : {std::pair{"joint_moe.a", j.a}, {"joint_moe.b", j.b}, {"joint_moe.c", j.c}}) {
      if (!std::isfinite(x) || !(x > 0) || x > kLawMaxCoefficient) {
        return bad(field, "must be finite, > 0 and <= 1e12");
      }
    }
    for (auto [field, x] : {std::pair{"joint_moe.alpha", j.alpha}, {"joint_moe.beta", j.beta},
                            {"joint_moe.delta", j.delta}, {"joint_moe.gamma", j.gamma},
                            {"joint_moe.omega", j.omega}, {"joint_moe.zeta", j.zeta}}) {
      if (!std::isfinite(x) || std::abs(x) > kLawMaxExponent) {
        return bad(field, "must be finite and at most 2 in magnitude");
      }
    }
    if (!std::isfinite(j.e_start) || !(j.e_start > 0)) return bad("joint_moe.e_start", "must be finite and > 0");
    if (!std::isfinite(j.e_max) || !(j.e_max > j.e_start) || j.e_max > kLawMaxExpansion) {
      return bad("joint_moe.e_max", "must be finite, > joint_moe.e_start and <= 1e6");
    }
    // The loss must fall with N and D for every expert count up to E_max
    // (Ê ranges over [E_start, E_max)): the exponents stay negative.
    for (double e_hat : {j.e_start, j.e_max}) {
      if (!(j.alpha + j.gamma * std::log(e_hat) < 0)) {
        return bad("joint_moe.alpha", "with gamma must keep the N exponent negative (alpha + gamma ln Ê < 0)");
      }
      if (!(j.beta + j.zeta * std::log(e_hat) < 0)) {
        return bad("joint_moe.beta", "with zeta must keep the D exponent negative (beta + zeta ln Ê < 0)");
      }
    }
    for (auto [field, x] : {std::pair{"joint_moe.max_fitted_active_params", j.max_fitted_active_params},
                            {"joint_moe.max_fitted_total_params", j.max_fitted_total_params},
                            {"joint_moe.max_fitted_experts", j.max_fitted_experts},
                            {"joint_moe.max_fitted_tokens_per_param", j.max_fitted_tokens_per_param}}) {
      if (!std::isfinite(x) || x < 0) return bad(field, "must be finite and >= 0");
    }
  }
  const LawUncertainty& u = law.uncertainty;
  for (auto [field, x] : {std::pair{"uncertainty.E", u.se_E}, {"uncertainty.A", u.se_A},
                          {"uncertainty.B", u.se_B}, {"uncertainty.alpha", u.se_alpha},
                          {"uncertainty.beta", u.se_beta}, {"uncertainty.rmse", u.rmse}}) {
    if (!std::isfinite(x) || x < 0 || x > kLawMaxCoefficient) {
      return bad(field, "must be finite, >= 0 and <= 1e12");
    }
  }
  if (u.kind == UncertaintyKind::kStandardErrors && law.joint.present) {
    return bad("uncertainty.kind", "standard_errors perturbs E, A, B, alpha, beta; a joint_moe law "
               "takes fit_rmse or unknown");
  }
  if (u.kind == UncertaintyKind::kFitRmse && !(u.rmse > 0)) {
    return bad("uncertainty.rmse", "must be > 0 for kind fit_rmse");
  }
  const MoeLawTerm& m = law.moe;
  if (!m.present) return Status();
  for (auto [field, x] : {std::pair{"moe.a", m.a}, {"moe.b", m.b}, {"moe.c", m.c}, {"moe.d", m.d}}) {
    if (!std::isfinite(x) || std::abs(x) > kLawMaxMoeConstant) {
      return bad(field, "must be finite and at most 100 in magnitude");
    }
  }
  if (!std::isfinite(m.e_start) || !(m.e_start > 1)) return bad("moe.e_start", "must be finite and > 1");
  if (!std::isfinite(m.e_max) || !(m.e_max > m.e_start) || m.e_max > kLawMaxExpansion) {
    return bad("moe.e_max", "must be finite, > moe.e_start and <= 1e6");
  }
  if (!(m.a + m.c * std::log10(m.e_start) < 0)) {
    return bad("moe.a", "with moe.c must make the loss fall with N (a + c log10 e_start < 0)");
  }
  if (!std::isfinite(m.max_fitted_active_params) || m.max_fitted_active_params < 0) {
    return bad("moe.max_fitted_active_params", "must be finite and >= 0");
  }
  if (!std::isfinite(m.max_fitted_expansion) || m.max_fitted_expansion < 0) {
    return bad("moe.max_fitted_expansion", "must be finite and >= 0");
  }
  return Status();
}

double expert_transform(const MoeLawTerm& term, double expansion) {
  const double inv_start = 1.0 / (1.0 / (term.e_start - 1.0) - 1.0 / term.e_max);
  return 1.0 / (1.0 / (expansion - 1.0 + inv_start) + 1.0 / term.e_max) + 1.0;
}

double effective_params(const MoeLawTerm& term, double n_active, double expansion) {
  if (!term.present || !(expansion > 1)) return n_active;
  const double le = std::log10(expert_transform(term, expansion));
  const double le1 = std::log10(expert_transform(term, 1.0));
  const double log_n = std::log10(n_active);
  const double log_eff =
      ((term.a + term.c * le) * log_n + term.b * (le - le1)) / (term.a + term.c * le1);
  return std::pow(10.0, log_eff);
}

double LossLaw::moe_loss(double n_active, double expansion, double n_tokens) const {
  if (joint.present) {
    if (!(expansion > 1)) return loss(n_active, n_tokens);
    return joint_loss(joint, n_active, expansion, n_tokens);
  }
  return loss(effective_params(moe, n_active, expansion), n_tokens);
}

const char* to_string(UncertaintyKind kind) {
  switch (kind) {
    case UncertaintyKind::kStandardErrors: return "standard_errors";
    case UncertaintyKind::kFitRmse: return "fit_rmse";
    case UncertaintyKind::kUnknown: break;
  }
  return "unknown";
}

}  // namespace llmplan::scaling

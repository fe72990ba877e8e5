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
  return loss(effective_params(moe, n_active, expansion), n_tokens);
}

}  // namespace llmplan::scaling

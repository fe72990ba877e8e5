#include "scaling/loss_interval.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <fmt/format.h>

namespace llmplan::scaling {

namespace {

constexpr double kTwoPi = 6.283185307179586;

// Standard normal draws from the fully specified mt19937_64 (Box-Muller), so
// that the draws do not depend on the standard library's distributions.
class Normals {
 public:
  Normals() : gen_(kLossDrawSeed) {}
  double next() {
    if (have_) {
      have_ = false;
      return spare_;
    }
    const double u1 = 1.0 - static_cast<double>(gen_() >> 11) * 0x1.0p-53;  // (0, 1]
    const double u2 = static_cast<double>(gen_() >> 11) * 0x1.0p-53;
    const double r = std::sqrt(-2.0 * std::log(u1));
    spare_ = r * std::sin(kTwoPi * u2);
    have_ = true;
    return r * std::cos(kTwoPi * u2);
  }

 private:
  std::mt19937_64 gen_;
  bool have_ = false;
  double spare_ = 0;
};

// The kLossDraws perturbed laws (dense constants drawn; MoE terms kept).
std::vector<LossLaw> draws(const LossLaw& law) {
  const LawUncertainty& u = law.uncertainty;
  Normals z;
  std::vector<LossLaw> out(kLossDraws, law);
  for (LossLaw& d : out) {
    d.E = law.E + u.se_E * z.next();
    d.A = law.A * std::exp(u.se_A / law.A * z.next());
    d.B = law.B * std::exp(u.se_B / law.B * z.next());
    d.alpha = std::max(law.alpha + u.se_alpha * z.next(), kLawMinExponent);
    d.beta = std::max(law.beta + u.se_beta * z.next(), kLawMinExponent);
  }
  return out;
}

double quantile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const double pos = p * (static_cast<double>(v.size()) - 1);
  const size_t i = static_cast<size_t>(std::floor(pos));
  const size_t j = std::min(i + 1, v.size() - 1);
  return v[i] + (v[j] - v[i]) * (pos - static_cast<double>(i));
}

double predict(const LossLaw& law, const LossQuery& q) {
  return law.moe_loss(q.n_active, q.expansion, std::max(q.tokens, 1.0));
}

std::string se_method(const LossLaw& law) {
  return fmt::format(
      "{} paired draws of E, A, B, alpha, beta from the published standard errors ({}), "
      "independent (no covariance published: overstates the spread), P{:.0f}-P{:.0f}",
      kLossDraws, law.uncertainty.source.empty() ? law.name : law.uncertainty.source,
      (1 - kLossIntervalLevel) / 2 * 100, (1 + kLossIntervalLevel) / 2 * 100);
}

std::string rmse_method(const LossLaw& law, double factor) {
  return fmt::format("+-{:.4f}: {:.3f} x the law's published held-out RMSE {:.4f} ({}); a "
                     "prediction error within the fitted range, not a parameter interval",
                     kLossIntervalZ * factor * law.uncertainty.rmse, kLossIntervalZ * factor,
                     law.uncertainty.rmse,
                     law.uncertainty.source.empty() ? law.name : law.uncertainty.source);
}

std::string unknown_method(const LossLaw& law) {
  return "unknown: law " + law.name + " publishes no uncertainty" +
         (law.uncertainty.source.empty() ? std::string() : " (" + law.uncertainty.source + ")");
}

}  // namespace

LossInterval loss_interval(const LossLaw& law, const LossQuery& q) {
  LossInterval r;
  const double point = predict(law, q);
  switch (law.uncertainty.kind) {
    case UncertaintyKind::kStandardErrors: {
      std::vector<double> v;
      for (const LossLaw& d : draws(law)) v.push_back(predict(d, q));
      r.known = true;
      r.low = quantile(v, (1 - kLossIntervalLevel) / 2);
      r.high = quantile(v, (1 + kLossIntervalLevel) / 2);
      r.method = se_method(law);
      break;
    }
    case UncertaintyKind::kFitRmse:
      r.known = true;
      r.low = point - kLossIntervalZ * law.uncertainty.rmse;
      r.high = point + kLossIntervalZ * law.uncertainty.rmse;
      r.method = rmse_method(law, 1.0);
      break;
    case UncertaintyKind::kUnknown:
      r.method = unknown_method(law);
      break;
  }
  return r;
}

LossComparison compare_losses(const LossLaw& law, const LossQuery& a, const LossQuery& b) {
  LossComparison r;
  r.difference = predict(law, a) - predict(law, b);
  switch (law.uncertainty.kind) {
    case UncertaintyKind::kStandardErrors: {
      std::vector<double> v;
      for (const LossLaw& d : draws(law)) v.push_back(predict(d, a) - predict(d, b));
      r.known = true;
      r.low = quantile(v, (1 - kLossIntervalLevel) / 2);
      r.high = quantile(v, (1 + kLossIntervalLevel) / 2);
      r.method = se_method(law);
      break;
    }
    case UncertaintyKind::kFitRmse: {
      const double half = kLossIntervalZ * std::sqrt(2.0) * law.uncertainty.rmse;
      r.known = true;
      r.low = r.difference - half;
      r.high = r.difference + half;
      r.method = rmse_method(law, std::sqrt(2.0)) + "; the two predictions' errors taken as independent";
      break;
    }
    case UncertaintyKind::kUnknown:
      r.method = unknown_method(law);
      break;
  }
  r.exceeds = r.known && (r.low > 0 || r.high < 0);
  return r;
}

}  // namespace llmplan::scaling

#include "scaling/objectives.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace llmplan::scaling {

double effective_repeats(double total, double unique, double r_star) {
  if (total <= unique) return total;
  const double r = total / unique - 1.0;
  return unique + unique * r_star * (1.0 - std::exp(-r / r_star));
}

double compute_optimal_params(const LossLaw& law, double tokens) {
  const double g = std::pow(law.alpha * law.A / (law.beta * law.B), 1.0 / (law.alpha + law.beta));
  return g * std::pow(tokens * g, law.beta / law.alpha);
}

DataConstrainedLoss data_constrained_loss(const LossLaw& law, double n_params, double tokens,
                                          double unique_tokens, const DataConstrainedConstants& k) {
  auto loss_with = [&](double unique) {
    const double d_eff = effective_repeats(tokens, unique, k.r_d_star);
    const double u_n = std::min(n_params, compute_optimal_params(law, unique));
    const double n_eff = effective_repeats(n_params, u_n, k.r_n_star);
    return DataConstrainedLoss{law.loss(n_eff, d_eff), n_eff, d_eff, tokens / unique, 0};
  };
  DataConstrainedLoss out = loss_with(unique_tokens);
  // The same N and D with every token distinct: unique = tokens.
  out.repeat_penalty = std::max(0.0, out.loss - loss_with(std::max(tokens, unique_tokens)).loss);
  return out;
}

double tokens_for_loss(const LossLaw& law, double n_params, double target) {
  const double room = target - law.E - law.A / std::pow(n_params, law.alpha);
  if (!(room > 0)) return std::numeric_limits<double>::infinity();
  return std::pow(law.B / room, 1.0 / law.beta);
}

Result<LifetimeOptimum> lifetime_optimal(const LossLaw& law, double target,
                                         double inference_tokens) {
  LLMPLAN_RETURN_IF_ERROR(validate(law));
  if (!std::isfinite(target) || !(target > law.E)) {
    return Status::invalid_argument("target loss must be a finite number above the law's E");
  }
  if (!std::isfinite(inference_tokens) || inference_tokens < 0) {
    return Status::invalid_argument("inference tokens must be a finite number >= 0");
  }
  // N must exceed N_min, where A / N^alpha alone uses up the room above E.
  const double x_min = std::log(std::pow(law.A / (target - law.E), 1.0 / law.alpha));
  auto f = [&](double x) {
    const double n = std::exp(x);
    return lifetime_flops(n, tokens_for_loss(law, n, target), inference_tokens);
  };
  // A scan over 40 e-folds above N_min (f -> infinity at both ends), then a
  // golden-section search around the scan's least point.
  constexpr int kScan = 800;
  constexpr double kSpan = 40.0;
  int best = 1;
  double best_f = f(x_min + kSpan / kScan);
  for (int i = 2; i < kScan; ++i) {
    const double v = f(x_min + kSpan * i / kScan);
    if (v < best_f) {
      best_f = v;
      best = i;
    }
  }
  double lo = x_min + kSpan * (best - 1) / kScan, hi = x_min + kSpan * (best + 1) / kScan;
  const double phi = (std::sqrt(5.0) - 1.0) / 2.0;
  double a = hi - phi * (hi - lo), b = lo + phi * (hi - lo);
  double fa = f(a), fb = f(b);
  for (int it = 0; it < 200 && hi - lo > 1e-12; ++it) {
    if (fa < fb) {
      hi = b;
      b = a;
      fb = fa;
      a = hi - phi * (hi - lo);
      fa = f(a);
    } else {
      lo = a;
      a = b;
      fa = fb;
      b = lo + phi * (hi - lo);
      fb = f(b);
    }
  }
  LifetimeOptimum out;
  out.n_params = std::exp((lo + hi) / 2);
  out.tokens = tokens_for_loss(law, out.n_params, target);
  out.flops = lifetime_flops(out.n_params, out.tokens, inference_tokens);
  return out;
}

}  // namespace llmplan::scaling

#include "scaling/fit.h"

#include <ceres/ceres.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <sstream>
#include <tuple>

#include "scaling/optimal.h"

namespace llmplan::scaling {
namespace {

constexpr int kMinPoints = 5;
constexpr int kNumParams = 5;
// Order of the fitted numbers in the parameter block.
enum Param { kA = 0, kB = 1, kE = 2, kAlpha = 3, kBeta = 4 };
using Params = std::array<double, kNumParams>;

struct LogPoint {
  double log_n = 0, log_d = 0, log_loss = 0;
};

// r = LSE(a - alpha log N, b - beta log D, e) - log L and dr/dx.
// Returns false when the result is not finite.
bool log_residual(const double* x, const LogPoint& p, double* r, double grad[kNumParams]) {
  const double u1 = x[kA] - x[kAlpha] * p.log_n;
  const double u2 = x[kB] - x[kBeta] * p.log_d;
  const double u3 = x[kE];
  const double m = std::max(u1, std::max(u2, u3));
  const double w1 = std::exp(u1 - m), w2 = std::exp(u2 - m), w3 = std::exp(u3 - m);
  const double sum = w1 + w2 + w3;
  *r = m + std::log(sum) - p.log_loss;
  if (grad != nullptr) {
    grad[kA] = w1 / sum;
    grad[kB] = w2 / sum;
    grad[kE] = w3 / sum;
    grad[kAlpha] = -grad[kA] * p.log_n;
    grad[kBeta] = -grad[kB] * p.log_d;
  }
  return std::isfinite(*r);
}

double huber(double r, double delta) {
  const double abs_r = std::fabs(r);
  return abs_r <= delta ? 0.5 * r * r : delta * (abs_r - 0.5 * delta);
}

// Ceres minimises 1/2 sum rho_i^2. We hand it rho_i = sign(r_i) sqrt(2 Huber(r_i)),
// so that 1/2 rho_i^2 = Huber(r_i) exactly: the same objective as one Huber
// loss per point, but as a single residual block (one Ceres evaluation per
// iteration instead of one per point, which is what makes 4,500 starts fast).
// In the quadratic zone rho = r; in the linear zone
// rho = sign(r) sqrt(2 delta |r| - delta^2), d rho / dr = delta / |rho|.
class HuberLogResiduals final : public ceres::CostFunction {
 public:
  HuberLogResiduals(const std::vector<LogPoint>& points, double delta)
      : points_(points), delta_(delta) {
    set_num_residuals(static_cast<int>(points.size()));
    mutable_parameter_block_sizes()->push_back(kNumParams);
  }

  bool Evaluate(double const* const* parameters, double* residuals,
                double** jacobians) const override {
    const double* x = parameters[0];
    double* jacobian = jacobians != nullptr ? jacobians[0] : nullptr;
    double grad[kNumParams];
    for (size_t i = 0; i < points_.size(); ++i) {
      double r = 0;
      if (!log_residual(x, points_[i], &r, jacobian != nullptr ? grad : nullptr)) return false;
      double rho = r, drho_dr = 1;
      if (std::fabs(r) > delta_) {
        rho = std::copysign(std::sqrt(2 * delta_ * std::fabs(r) - delta_ * delta_), r);
        drho_dr = delta_ / std::fabs(rho);
      }
      residuals[i] = rho;
      if (jacobian != nullptr) {
        for (int k = 0; k < kNumParams; ++k) jacobian[i * kNumParams + k] = drho_dr * grad[k];
      }
    }
    return true;
  }

 private:
  const std::vector<LogPoint>& points_;
  double delta_;
};

double objective_at(const Params& x, const std::vector<LogPoint>& points, double delta) {
  double sum = 0;
  for (const LogPoint& p : points) {
    double r = 0;
    if (!log_residual(x.data(), p, &r, nullptr)) return std::numeric_limits<double>::infinity();
    sum += huber(r, delta);
  }
  return sum;
}

struct Solution {
  Params x{};
  double objective = std::numeric_limits<double>::infinity();
  bool converged = false;
  int iterations = 0;
  std::string report;
};

// Runs Levenberg-Marquardt from `start` for at most `max_iterations`.
Solution solve_from(const Params& start, const std::vector<LogPoint>& points, int max_iterations,
                    const FitOptions& options) {
  Solution s;
  s.x = start;
  ceres::Problem problem;
  problem.AddResidualBlock(new HuberLogResiduals(points, options.huber_delta), nullptr, s.x.data());
  ceres::Solver::Options solver;
  solver.linear_solver_type = ceres::DENSE_QR;
  solver.max_num_iterations = max_iterations;
  solver.function_tolerance = options.function_tolerance;
  solver.gradient_tolerance = options.gradient_tolerance;
  solver.parameter_tolerance = options.parameter_tolerance;
  solver.num_threads = 1;
  solver.logging_type = ceres::SILENT;
  solver.minimizer_progress_to_stdout = false;
  ceres::Solver::Summary summary;
  ceres::Solve(solver, &problem, &summary);
  s.objective = objective_at(s.x, points, options.huber_delta);
  s.converged = summary.termination_type == ceres::CONVERGENCE && std::isfinite(s.objective);
  s.iterations = static_cast<int>(summary.iterations.size());
  s.report = summary.BriefReport();
  return s;
}

std::vector<Params> grid_starts(const StartGrid& grid) {
  std::vector<Params> starts;
  starts.reserve(grid.size());
  for (double alpha : grid.alpha)
    for (double beta : grid.beta)
      for (double e : grid.e)
        for (double a : grid.a)
          for (double b : grid.b) starts.push_back({a, b, e, alpha, beta});
  return starts;
}

// Indices of `solutions` ordered by objective, ties by index (deterministic).
std::vector<size_t> rank_by_objective(const std::vector<Solution>& solutions) {
  std::vector<size_t> order(solutions.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t i, size_t j) {
    return solutions[i].objective < solutions[j].objective;
  });
  return order;
}

LossLaw law_from_params(const Params& x) {
  LossLaw law;
  law.name = "fit";
  law.A = std::exp(x[kA]);
  law.B = std::exp(x[kB]);
  law.E = std::exp(x[kE]);
  law.alpha = x[kAlpha];
  law.beta = x[kBeta];
  return law;
}

Status validate_points(const std::vector<LossPoint>& points) {
  if (points.size() < kMinPoints) {
    return Status::invalid_argument("a fit needs at least " + std::to_string(kMinPoints) +
                                    " points (5 unknowns), got " + std::to_string(points.size()));
  }
  for (size_t i = 0; i < points.size(); ++i) {
    const LossPoint& p = points[i];
    for (auto [name, value] : {std::pair{"n_params", p.n_params}, std::pair{"n_tokens", p.n_tokens},
                               std::pair{"loss", p.loss}}) {
      if (!(std::isfinite(value) && value > 0)) {
        std::ostringstream m;
        m << "point " << i << ": " << name << " must be positive and finite, got " << value;
        return Status::invalid_argument(m.str());
      }
    }
  }
  return Status();
}

Status validate_options(const FitOptions& o) {
  auto bad = [](const std::string& field, const std::string& why) {
    return Status::invalid_argument("fit option " + field + ": " + why);
  };
  if (!(std::isfinite(o.huber_delta) && o.huber_delta > 0))
    return bad("huber_delta", "must be > 0");
  if (o.starts.size() == 0) return bad("starts", "the grid of starts is empty");
  if (o.screen_iterations < 1) return bad("screen_iterations", "must be >= 1");
  if (o.polish_count < 1) return bad("polish_count", "must be >= 1");
  if (o.max_iterations < 1) return bad("max_iterations", "must be >= 1");
  if (!(o.function_tolerance >= 0 && o.gradient_tolerance >= 0 && o.parameter_tolerance >= 0)) {
    return bad("tolerances", "must be >= 0");
  }
  if (o.bootstrap_samples < 0 || o.bootstrap_samples > kMaxBootstrapSamples) {
    return bad("bootstrap_samples", "must be from 0 to " + std::to_string(kMaxBootstrapSamples) +
                                        ", got " + std::to_string(o.bootstrap_samples));
  }
  if (o.bootstrap_starts < 1) return bad("bootstrap_starts", "must be >= 1");
  if (!(o.confidence_level > 0 && o.confidence_level < 1)) {
    return bad("confidence_level", "must be in (0, 1)");
  }
  return Status();
}

// Linear-interpolated quantile q of sorted values (numpy's default).
double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

ConfidenceInterval interval_of(std::vector<double> values, double level) {
  ConfidenceInterval ci;
  if (values.empty()) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    return {nan, nan, nan};
  }
  std::sort(values.begin(), values.end());
  ci.low = quantile(values, (1 - level) / 2);
  ci.high = quantile(values, 1 - (1 - level) / 2);
  const double mean = std::accumulate(values.begin(), values.end(), 0.0) / values.size();
  double ss = 0;
  for (double v : values) ss += (v - mean) * (v - mean);
  ci.std_error = values.size() > 1 ? std::sqrt(ss / static_cast<double>(values.size() - 1)) : 0;
  return ci;
}

// A uniform index in [0, n) from the engine's raw output (no std
// distribution, whose algorithm differs between standard libraries).
size_t draw_index(std::mt19937_64& engine, size_t n) {
  const uint64_t range = static_cast<uint64_t>(n);
  const uint64_t limit =
      std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % range;
  uint64_t v = engine();
  while (v >= limit) v = engine();
  return static_cast<size_t>(v % range);
}

BootstrapResult bootstrap(const std::vector<LogPoint>& points, const std::vector<Params>& starts,
                          const FitOptions& options) {
  BootstrapResult out;
  out.samples = options.bootstrap_samples;
  out.confidence_level = options.confidence_level;
  out.seed = options.seed;
  std::mt19937_64 engine(options.seed);
  std::vector<double> E, A, B, alpha, beta, a, b;
  std::vector<LogPoint> sample(points.size());
  if (options.bootstrap_progress) options.bootstrap_progress(0, options.bootstrap_samples);
  for (int s = 0; s < options.bootstrap_samples; ++s) {
    for (LogPoint& p : sample) p = points[draw_index(engine, points.size())];
    Solution best;
    for (const Params& start : starts) {
      Solution sol = solve_from(start, sample, options.max_iterations, options);
      if (sol.objective < best.objective) best = std::move(sol);
    }
    if (options.bootstrap_progress) options.bootstrap_progress(s + 1, options.bootstrap_samples);
    if (!best.converged) {
      ++out.failed;
      continue;
    }
    const LossLaw law = law_from_params(best.x);
    const FrontierExponents exps = frontier_exponents(law);
    E.push_back(law.E);
    A.push_back(law.A);
    B.push_back(law.B);
    alpha.push_back(law.alpha);
    beta.push_back(law.beta);
    a.push_back(exps.a);
    b.push_back(exps.b);
  }
  const double level = options.confidence_level;
  out.E = interval_of(std::move(E), level);
  out.A = interval_of(std::move(A), level);
  out.B = interval_of(std::move(B), level);
  out.alpha = interval_of(std::move(alpha), level);
  out.beta = interval_of(std::move(beta), level);
  out.a = interval_of(std::move(a), level);
  out.b = interval_of(std::move(b), level);
  return out;
}

}  // namespace

StartGrid chinchilla_start_grid() {
  StartGrid grid;
  grid.alpha = {0, 0.5, 1, 1.5, 2};
  grid.beta = {0, 0.5, 1, 1.5, 2};
  grid.e = {-1, -0.5, 0, 0.5, 1};
  grid.a = {0, 5, 10, 15, 20, 25};
  grid.b = {0, 5, 10, 15, 20, 25};
  return grid;
}

double huber_objective(const LossLaw& law, const std::vector<LossPoint>& points,
                       double huber_delta) {
  double sum = 0;
  for (const LossPoint& p : points) {
    sum += huber(std::log(law.loss(p.n_params, p.n_tokens)) - std::log(p.loss), huber_delta);
  }
  return sum;
}

Result<ScalingFit> fit_loss_law(const std::vector<LossPoint>& points, const FitOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  LLMPLAN_RETURN_IF_ERROR(validate_points(points));
  LLMPLAN_RETURN_IF_ERROR(validate_options(options));
  if (static_cast<double>(options.bootstrap_samples) * static_cast<double>(points.size()) >
      kMaxBootstrapPointFits) {
    const long most = static_cast<long>(kMaxBootstrapPointFits / static_cast<double>(points.size()));
    return Status::invalid_argument(
        "bootstrap_samples: " + std::to_string(options.bootstrap_samples) + " resamples of " +
        std::to_string(points.size()) + " points is more than the bound of 1e7 point-fits; give "
        "at most " + std::to_string(most));
  }
  std::vector<LogPoint> log_points;
  log_points.reserve(points.size());
  for (const LossPoint& p : points) {
    log_points.push_back({std::log(p.n_params), std::log(p.n_tokens), std::log(p.loss)});
  }

  // Screening: a few iterations from every grid start.
  const std::vector<Params> starts = grid_starts(options.starts);
  std::vector<Solution> screened;
  screened.reserve(starts.size());
  for (const Params& start : starts) {
    screened.push_back(solve_from(start, log_points, options.screen_iterations, options));
  }
  const std::vector<size_t> order = rank_by_objective(screened);

  // Polishing: the best screened starts, run to convergence.
  const size_t n_polish = std::min(starts.size(), static_cast<size_t>(options.polish_count));
  std::vector<Solution> polished;
  for (size_t k = 0; k < n_polish; ++k) {
    const Solution& from = screened[order[k]];
    Solution sol = solve_from(from.x, log_points, options.max_iterations, options);
    sol.iterations += from.iterations;
    polished.push_back(std::move(sol));
  }
  const std::vector<size_t> polished_order = rank_by_objective(polished);
  const Solution& best = polished[polished_order.front()];

  ScalingFit fit;
  fit.law = law_from_params(best.x);
  std::ostringstream source;
  source << "Huber (delta " << options.huber_delta << ") fit to " << points.size() << " points";
  fit.law.source = source.str();
  // Issue 48, item 11: a best fit outside the range a loss law takes (a
  // loss that does not fall as N or D grows: swapped columns, or data from
  // something else) is refused, not returned as a "converged" law that
  // --law would refuse. The exponents first: their failure says the most.
  for (auto [name, x, grows] : {std::tuple{"alpha", fit.law.alpha, "N"},
                                std::tuple{"beta", fit.law.beta, "D"}}) {
    if (!(x >= kLawMinExponent && x <= kLawMaxExponent)) {
      std::ostringstream m;
      m << "the best fit's " << name << " is " << x << ", outside [" << kLawMinExponent << ", "
        << kLawMaxExponent << "], the range of a loss law's exponents: "
        << (x < kLawMinExponent ? std::string("the loss does not fall as ") + grows + " grows"
                                : std::string("the loss falls too steeply with ") + grows)
        << " in these points (check which columns hold N, D and the loss); no law is returned";
      return Status::invalid_argument(m.str());
    }
  }
  if (Status valid = validate(fit.law); !valid.ok()) {
    return Status::invalid_argument("the best fit is not a valid loss law (" + valid.message() +
                                    "); no law is returned");
  }
  const FrontierExponents exps = frontier_exponents(fit.law);
  fit.a = exps.a;
  fit.b = exps.b;
  fit.objective = best.objective;
  fit.huber_delta = options.huber_delta;
  fit.converged = best.converged;
  fit.solver_report = best.report;
  fit.iterations = best.iterations;
  fit.n_points = static_cast<int>(points.size());
  fit.starts = static_cast<int>(starts.size());
  fit.starts_polished = static_cast<int>(n_polish);
  for (const Solution& sol : polished) {
    fit.polished_converged += sol.converged ? 1 : 0;
    fit.polished_at_best += sol.objective - best.objective <= 1e-9 * best.objective ? 1 : 0;
  }

  if (options.bootstrap_samples > 0) {
    std::vector<Params> boot_starts;
    for (size_t k = 0; k < n_polish && k < static_cast<size_t>(options.bootstrap_starts); ++k) {
      boot_starts.push_back(screened[order[k]].x);
    }
    fit.bootstrap = bootstrap(log_points, boot_starts, options);
  }
  fit.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return fit;
}

}  // namespace llmplan::scaling

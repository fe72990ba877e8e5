// Fitting the Chinchilla-form law L(N, D) = E + A/N^alpha + B/D^beta to
// measured training runs, as Hoffmann et al. 2022 (Approach 3) and
// Besiroglu et al. 2024 did:
//
//  - parameterisation: L = exp(LSE(a - alpha log N, b - beta log D, e)) with
//    A = exp(a), B = exp(b), E = exp(e) (so A, B, E stay positive);
//  - objective: the sum over points of Huber_delta(log L_pred - log L_obs),
//    delta = 1e-3 by default;
//  - minimiser: Ceres (Levenberg-Marquardt, analytic Jacobian), from every
//    point of a grid of starts. To keep 4,500 starts fast, each start first
//    runs a short screening pass (FitOptions::screen_iterations); the best
//    FitOptions::polish_count starts are then run to convergence with tight
//    tolerances, and the lowest objective wins;
//  - uncertainty: an optional nonparametric bootstrap (resample the points
//    with replacement, refit) giving percentile confidence intervals and
//    standard errors.
//
// Ceres is an implementation detail: no Ceres type appears here.
#ifndef LLMPLAN_SCALING_FIT_H_
#define LLMPLAN_SCALING_FIT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "scaling/law.h"
#include "base/status.h"

namespace llmplan::scaling {

// Starting values for the five fitted numbers; every combination is one start.
struct StartGrid {
  std::vector<double> alpha, beta, e, a, b;
  size_t size() const { return alpha.size() * beta.size() * e.size() * a.size() * b.size(); }
};

// The grid of Hoffmann et al. 2022 (Appendix D.2), also used by Besiroglu et
// al. 2024: alpha, beta in {0, 0.5, ..., 2}, e in {-1, -0.5, ..., 1},
// a, b in {0, 5, ..., 25} -- 4,500 starts.
StartGrid chinchilla_start_grid();

// Most bootstrap replicates a fit accepts: each is a refit (about 7 ms on the
// 245 Chinchilla points with 4 starts), so 10,000 take a minute or two;
// percentile intervals gain nothing from more.
inline constexpr int kMaxBootstrapSamples = 10000;
// Most bootstrap work, resamples x data points: a refit costs about 0.12 CPU
// ms per point (20 resamples of 10,000 points took 2.5 s), so 10,000
// resamples of 10,000 points would take about 20 minutes (issue 31). The
// bound keeps the bootstrap to about two minutes: 10,000 resamples up to
// 1,000 points, 1,000 resamples at the 10,000-point limit.
inline constexpr double kMaxBootstrapPointFits = 1e7;

struct FitOptions {
  double huber_delta = 1e-3;
  StartGrid starts = chinchilla_start_grid();
  int screen_iterations = 10;         // solver iterations per start in the screening pass
  int polish_count = 20;              // best screened starts run to convergence
  int max_iterations = 1000;          // per polished start
  double function_tolerance = 1e-12;  // relative change of the objective
  double gradient_tolerance = 1e-14;
  double parameter_tolerance = 1e-12;  // relative change of the parameters

  // Bootstrap replicates, 0 .. kMaxBootstrapSamples; 0: no bootstrap.
  int bootstrap_samples = 0;
  // Each bootstrap replicate is refit from this many of the best screened
  // starts of the full-data fit (the best of them wins).
  int bootstrap_starts = 4;
  uint64_t seed = 1;               // of the bootstrap resampling
  double confidence_level = 0.95;  // of the percentile intervals
  // Optional: (bootstrap replicates done, of all), called on the calling
  // thread with 0 when the bootstrap starts and after each replicate.
  std::function<void(long done, long total)> bootstrap_progress;
};

// A bootstrap percentile interval and standard error of one fitted quantity.
struct ConfidenceInterval {
  double low = 0;
  double high = 0;
  double std_error = 0;  // standard deviation over the replicates
};

struct BootstrapResult {
  int samples = 0;  // replicates drawn; 0 when no bootstrap was asked for
  int failed = 0;   // replicates whose best refit did not converge (left out)
  double confidence_level = 0;
  uint64_t seed = 0;
  ConfidenceInterval E, A, B, alpha, beta;
  ConfidenceInterval a, b;  // the frontier exponents (see ScalingFit)
};

struct ScalingFit {
  LossLaw law;  // name "fit"
  // Compute-optimal exponents implied by the law: N_opt ~ C^a, D_opt ~ C^b.
  double a = 0, b = 0;
  double objective = 0;       // sum of Huber losses at the optimum
  double huber_delta = 0;     // FitOptions::huber_delta used
  bool converged = false;     // the winning start met a tolerance
  std::string solver_report;  // Ceres's one-line report for the winning start
  int iterations = 0;         // solver iterations of the winning start (screen + polish)
  int n_points = 0;
  int starts = 0;           // grid starts screened
  int starts_polished = 0;  // run to convergence
  int polished_converged = 0;
  // Polished starts whose objective is within 1e-9 (relative) of the best:
  // when several agree, the optimum is unlikely to be a lucky local one.
  int polished_at_best = 0;
  BootstrapResult bootstrap;
  double seconds = 0;  // wall time; the only field that varies between runs
};

// Fits the law to `points`. Deterministic: the same points and options give
// the same fit (bar `seconds`), on any number of cores.
//
// Returns InvalidArgument if there are fewer than 5 points (5 unknowns), a
// point has a non-positive or non-finite N, D or loss (naming the point), or
// an option is out of range (naming it), and when the best fit is not a law
// validate() accepts (alpha or beta outside [kLawMinExponent,
// kLawMaxExponent]: a loss that does not fall as N or D grows, e.g. swapped
// columns; the message names the exponent). A solver that stops without
// converging is a result, not an error: converged == false and
// solver_report says why. Thread-safe: each call owns its problems.
Result<ScalingFit> fit_loss_law(const std::vector<LossPoint>& points,
                                const FitOptions& options = {});

// Sum over points of Huber_delta(log law.loss(N, D) - log loss): the
// objective fit_loss_law minimises. REQUIRES: valid points, law.loss > 0.
double huber_objective(const LossLaw& law, const std::vector<LossPoint>& points,
                       double huber_delta);

}  // namespace llmplan::scaling

#endif  // LLMPLAN_SCALING_FIT_H_

// Ceres fit of the Roofline (and network) constants; see accuracy.h.
#include <ceres/ceres.h>

#include <algorithm>
#include <array>
#include <functional>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "planner/accuracy/accuracy.h"
#include "planner/accuracy/restricted_fit.h"
#include "planner/accuracy/solver_options.h"
#include "simulator/simulate.h"

namespace llmplan::planner {
namespace {

constexpr int kRooflineParams = 7;
constexpr int kNetworkParams = 2;
// Per-feature factors: flash_attention_efficiency, pytorch_fsdp_efficiency,
// fp8_gemm_efficiency, fp4_gemm_efficiency (each fitted only when the cases
// exercise it).
constexpr int kFactorParams = 4;

// Parameters in solver units (so that steps are of similar size):
// gemm_efficiency, gemm_dim_half / 100, memory_efficiency,
// kernel_overhead_us, microbatch_overhead_ms, iteration_overhead_ms,
// host_run_ahead_s / 100 us; nic_efficiency, nic_latency_us.
// gemm_efficiency stops at 0.90 at most, and lower at the GPU's cited
// physical ceiling (GpuSpec::ceilings, e.g. what cuBLAS reaches on a large
// GEMM): a fit that wants more is absorbing some other error into an
// impossible kernel speed (see roofline_bounds()). memory_efficiency stops
// at its ceiling likewise.
// The run-ahead window stops at 10 ms, longer than any pass of the data's
// short layers (in effect, no limit).
constexpr Bounds kRooflineBounds[kRooflineParams] = {
    {0.2, 0.9}, {0.0, 10.0}, {0.2, 1.0}, {0.0, 300.0}, {0.0, 50.0}, {0.0, 1000.0}, {0.0, 100.0}};
constexpr Bounds kNetworkBounds[kNetworkParams] = {{0.1, 1.0}, {0.0, 200.0}};
constexpr const char* kRooflineNames[kRooflineParams] = {
    "gemm_efficiency",   "gemm_dim_half",         "memory_efficiency",
    "kernel_overhead_s", "microbatch_overhead_s", "iteration_overhead_s", "host_run_ahead_s"};

// The bounds for the cases' GPU: kRooflineBounds, with the upper bounds of
// the efficiencies lowered to the GPU's physical ceilings.
std::array<Bounds, kRooflineParams> roofline_bounds(const simulator::GpuSpec& gpu) {
  std::array<Bounds, kRooflineParams> b;
  std::copy(std::begin(kRooflineBounds), std::end(kRooflineBounds), b.begin());
  b[0].hi = std::min(b[0].hi, gpu.ceilings.gemm_efficiency);
  b[2].hi = std::min(b[2].hi, gpu.ceilings.memory_efficiency);
  for (Bounds& x : b) x.lo = std::min(x.lo, x.hi);
  return b;
}

AccuracyConstants to_constants(const AccuracyConstants& base, const double* r, const double* n,
                               const double* f) {
  AccuracyConstants c = base;
  c.roofline.flash_attention_efficiency = std::min(f[0], 1.0);
  // Forward differences may step just past an upper bound.
  c.roofline.gemm_efficiency = std::min(r[0], 1.0);
  c.roofline.gemm_dim_half = r[1] * 100.0;
  c.roofline.memory_efficiency = std::min(r[2], 1.0);
  c.roofline.kernel_overhead_s = r[3] * 1e-6;
  c.roofline.microbatch_overhead_s = r[4] * 1e-3;
  c.roofline.iteration_overhead_s = r[5] * 1e-3;
  c.roofline.host_run_ahead_s = r[6] * 1e-4;
  c.network.nic_efficiency = std::min(n[0], 1.0);
  c.network.nic_latency_s = n[1] * 1e-6;
  c.roofline.pytorch_fsdp_efficiency = std::min(f[1], 1.0);
  c.roofline.fp8_gemm_efficiency = std::min(f[2], 1.0);
  c.roofline.fp4_gemm_efficiency = std::min(f[3], 1.0);
  return c;
}

// One measured run: residual log(predicted / measured).
struct LogTimeResidual {
  const AccuracyCase* c;
  const AccuracyConstants* base;

  bool operator()(const double* r, const double* n, const double* f, double* residual) const {
    const AccuracyConstants k = to_constants(*base, r, n, f);
    AccuracyCase trial = *c;
    simulator::Cluster& cluster = trial.config.cluster;
    cluster.gpu.roofline = k.roofline;
    cluster.network.nvlink_latency_s = k.network.nvlink_latency_s;
    cluster.network.nic_latency_s = k.network.nic_latency_s;
    cluster.network.nic_efficiency = k.network.nic_efficiency;
    Result<simulator::StepReport> rep =
        simulator::simulate(c->config.model, c->config.plan, case_cluster(trial));
    if (!rep.ok() || !(rep->iteration_time_s > 0)) return false;
    residual[0] = std::log(rep->iteration_time_s / c->run.iteration_time_s);
    return true;
  }
};


// The deterministic screen of starting points: a small grid over the
// plausible range of the constants that matter most (in solver units).
std::vector<std::array<double, kRooflineParams>> screen_points() {
  std::vector<std::array<double, kRooflineParams>> out;
  for (double gemm : {0.60, 0.80}) {  // 2^5 = kCalibrationScreenPoints
    for (double mem : {0.5, 0.8}) {
      for (double launch_us : {20.0, 60.0}) {
        for (double microbatch_ms : {0.2, 2.0}) {
          for (double run_ahead_100us : {1.0, 100.0}) {
            out.push_back({gemm, 0.64, mem, launch_us, microbatch_ms, 1.0, run_ahead_100us});
          }
        }
      }
    }
  }
  return out;
}

// Forwards Ceres' per-iteration summaries to CalibrationOptions::on_progress.
class ProgressCallback : public ceres::IterationCallback {
 public:
  ProgressCallback(const CalibrationOptions& options, int start, int starts)
      : options_(options), start_(start), starts_(starts) {}
  ceres::CallbackReturnType operator()(const ceres::IterationSummary& s) override {
    options_.on_progress({CalibrationProgress::Stage::kPolish, start_, starts_, s.iteration, s.cost});
    return ceres::SOLVER_CONTINUE;
  }

 private:
  const CalibrationOptions& options_;
  int start_, starts_;
};

// What calibrate() fits besides the Roofline constants, and from where:
// the starting network, factor and bound values for the cases.
struct FitSetup {
  double n0[kNetworkParams];
  std::array<Bounds, kRooflineParams> bounds;
  Bounds flash_bounds;
  bool fit_stack;
  Bounds stack_bounds;
  bool fit_fp8;
  Bounds fp8_bounds;
  bool fit_fp4;
  Bounds fp4_bounds;
  double f0[kFactorParams];
  bool fit_16bit;
};

// The fit's setup for `cases`, starting from `initial` where a constant is
// held.
FitSetup fit_setup(const std::vector<AccuracyCase>& cases, const AccuracyConstants& initial,
                   const CalibrationOptions& options) {
  // Fitted parameters start from fixed values, never from `initial`'s
  // (which may be an earlier fit: the result would depend on it): the NIC at
  // 0.8 efficiency and 10 us when it is fitted.
  const double n0[kNetworkParams] = {
      options.fit_network ? 0.8 : initial.network.nic_efficiency,
      options.fit_network ? 10.0 : initial.network.nic_latency_s * 1e6};
  const std::array<Bounds, kRooflineParams> bounds =
      roofline_bounds(cases.front().config.cluster.gpu);
  // Flash-attention efficiency: fitted from min(initial, ceiling) within
  // [0.2, ceiling] when asked, else held at its initial value.
  const Bounds flash_bounds = {
      std::min(0.2, cases.front().config.cluster.gpu.ceilings.flash_attention_efficiency),
      std::min(1.0, cases.front().config.cluster.gpu.ceilings.flash_attention_efficiency)};
  // The PyTorch-FSDP stack's efficiency relative to Megatron-Core: fitted
  // only when the cases hold both stacks (with one stack it is the same
  // thing as the shared efficiencies), from 0.85 within [0.5, 1].
  const bool has_pytorch = std::any_of(cases.begin(), cases.end(), [](const AccuracyCase& c) {
    return c.stack == "pytorch-fsdp";
  });
  const bool has_megatron = std::any_of(cases.begin(), cases.end(), [](const AccuracyCase& c) {
    return c.stack != "pytorch-fsdp";
  });
  const bool fit_stack = has_pytorch && has_megatron;
  const Bounds stack_bounds = {0.5, 1.0};
  // FP8 GEMM efficiency: fitted when the cases hold FP8 runs, from 0.6
  // within [0.3, the GPU's fp8 ceiling]; otherwise held.
  const bool fit_fp8 = std::any_of(cases.begin(), cases.end(), [](const AccuracyCase& c) {
    return c.config.plan.precision == simulator::Precision::kFp8;
  });
  const double fp8_ceiling = cases.front().config.cluster.gpu.ceilings.fp8_gemm_efficiency;
  const Bounds fp8_bounds = {std::min(0.3, fp8_ceiling), fp8_ceiling};
  // NVFP4 GEMM efficiency likewise: fitted when the cases hold NVFP4 runs,
  // from 0.6 within [0.3, the GPU's fp4 ceiling]; otherwise held.
  const bool fit_fp4 = std::any_of(cases.begin(), cases.end(), [](const AccuracyCase& c) {
    return c.config.plan.precision == simulator::Precision::kNvfp4;
  });
  const double fp4_ceiling = cases.front().config.cluster.gpu.ceilings.fp4_gemm_efficiency;
  const Bounds fp4_bounds = {std::min(0.3, fp4_ceiling), fp4_ceiling};
  const double f0[kFactorParams] = {
      options.fit_flash_attention ? std::clamp(0.5, flash_bounds.lo, flash_bounds.hi)
                                  : initial.roofline.flash_attention_efficiency,
      fit_stack ? 0.85 : initial.roofline.pytorch_fsdp_efficiency,
      fit_fp8 ? std::clamp(0.6, fp8_bounds.lo, fp8_bounds.hi)
              : initial.roofline.fp8_gemm_efficiency,
      fit_fp4 ? std::clamp(0.6, fp4_bounds.lo, fp4_bounds.hi)
              : initial.roofline.fp4_gemm_efficiency};
  // The 16-bit GEMM efficiency: fitted only when the cases hold 16-bit runs
  // (as fp8_gemm_efficiency only with FP8 runs); otherwise held at its
  // initial value -- FP8 runs alone barely constrain it (their few 16-bit
  // GEMMs), and the fit would set it to whatever absorbs other errors.
  const bool fit_16bit = std::any_of(cases.begin(), cases.end(), [](const AccuracyCase& c) {
    return c.config.plan.precision == simulator::Precision::kBf16 ||
           c.config.plan.precision == simulator::Precision::kFp16;
  });
  return FitSetup{{n0[0], n0[1]}, bounds,     flash_bounds, fit_stack,
                  stack_bounds,   fit_fp8,    fp8_bounds,   fit_fp4,
                  fp4_bounds,     {f0[0], f0[1], f0[2], f0[3]}, fit_16bit};
}

// The screened starting points and their costs, cheapest first in `order`.
struct Screen {
  std::vector<std::array<double, kRooflineParams>> grid;
  std::vector<double> screen_cost;
  std::vector<size_t> order;
};

// 1. Screen: one simulation per case per grid point; keep the best few.
Result<Screen> screen_starts(const std::vector<AccuracyCase>& cases,
                             const AccuracyConstants& initial, const CalibrationOptions& options,
                             const FitSetup& fs,
                             const std::function<void(const std::string&)>& add_line) {
  char line[256];
  Screen sc;
  auto& grid = sc.grid;
  grid = screen_points();
  for (auto& point : grid) {  // starting points inside the (ceiling-lowered) bounds
    for (int i = 0; i < kRooflineParams; ++i) {
      point[i] = std::clamp(point[i], fs.bounds[i].lo, fs.bounds[i].hi);
    }
    if (!fs.fit_16bit) point[0] = initial.roofline.gemm_efficiency;
  }
  if (!fs.fit_16bit) {
    std::snprintf(line, sizeof line,
                  "gemm_efficiency held at %.4g (no 16-bit run among the fitted rows)\n",
                  initial.roofline.gemm_efficiency);
    add_line(line);
  }
  std::vector<double>& screen_cost = sc.screen_cost;
  screen_cost.resize(grid.size());
  double best_screen = std::numeric_limits<double>::infinity();
  for (size_t g = 0; g < grid.size(); ++g) {
    LLMPLAN_ASSIGN_OR_RETURN(
        screen_cost[g], robust_cost(cases, to_constants(initial, grid[g].data(), fs.n0, fs.f0)));
    best_screen = std::min(best_screen, screen_cost[g]);
    if (options.on_progress) {
      options.on_progress({CalibrationProgress::Stage::kScreen, static_cast<int>(g) + 1,
                           static_cast<int>(grid.size()), 0, best_screen});
    }
  }
  std::vector<size_t>& order = sc.order;
  order.resize(grid.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return screen_cost[a] < screen_cost[b]; });
  std::snprintf(line, sizeof line, "screened %zu starting points: best cost %.6g\n", grid.size(),
                screen_cost[order.front()]);
  add_line(line);
  return sc;
}

// The bounds of the fitted parameters; the held ones constant.
void bound_parameters(const FitSetup& fs, const CalibrationOptions& options, double* r, double* n,
                      double* f, ceres::Problem* fit) {
  ceres::Problem& problem = *fit;
  for (int i = fs.fit_16bit ? 0 : 1; i < kRooflineParams; ++i) {
    problem.SetParameterLowerBound(r, i, fs.bounds[i].lo);
    problem.SetParameterUpperBound(r, i, fs.bounds[i].hi);
  }
  if (!fs.fit_16bit) problem.SetManifold(r, new ceres::SubsetManifold(kRooflineParams, {0}));
  for (int i = 0; i < kNetworkParams; ++i) {
    problem.SetParameterLowerBound(n, i, kNetworkBounds[i].lo);
    problem.SetParameterUpperBound(n, i, kNetworkBounds[i].hi);
  }
  if (!options.fit_network) problem.SetParameterBlockConstant(n);
  std::vector<int> fixed;
  // Factor i within `b` when fitted, else held (fixed).
  const auto bound_factor = [&](bool fitted, int i, const Bounds& b) {
    if (fitted) {
      problem.SetParameterLowerBound(f, i, b.lo);
      problem.SetParameterUpperBound(f, i, b.hi);
    } else {
      fixed.push_back(i);
    }
  };
  bound_factor(options.fit_flash_attention, 0, fs.flash_bounds);
  bound_factor(fs.fit_stack, 1, fs.stack_bounds);
  bound_factor(fs.fit_fp8, 2, fs.fp8_bounds);
  bound_factor(fs.fit_fp4, 3, fs.fp4_bounds);
  if (fixed.size() == kFactorParams) {
    problem.SetParameterBlockConstant(f);
  } else if (!fixed.empty()) {
    problem.SetManifold(f, new ceres::SubsetManifold(kFactorParams, fixed));
  }
}

// The fitted parameters of the polished start (r, f) pinned at a bound.
void record_at_bounds(const FitSetup& fs, const CalibrationOptions& options, const double* r,
                      const double* f, std::vector<std::string>* at_bound) {
  for (int i = fs.fit_16bit ? 0 : 1; i < kRooflineParams; ++i) {
    const bool lo = r[i] <= fs.bounds[i].lo + 1e-9;
    const bool hi = r[i] >= fs.bounds[i].hi - 1e-9;
    if (lo || hi) {
      at_bound->push_back(std::string(kRooflineNames[i]) +
                          (lo ? " at its lower bound" : " at its upper bound"));
    }
  }
  // Factor i, when fitted, at a bound of `b`.
  const auto factor_at_bound = [&](bool fitted, int i, const Bounds& b, const char* name) {
    if (fitted && (f[i] <= b.lo + 1e-9 || f[i] >= b.hi - 1e-9)) {
      at_bound->push_back(std::string(name) +
                          (f[i] <= b.lo + 1e-9 ? " at its lower bound" : " at its upper bound"));
    }
  };
  factor_at_bound(options.fit_flash_attention, 0, fs.flash_bounds, "flash_attention_efficiency");
  factor_at_bound(fs.fit_fp8, 2, fs.fp8_bounds, "fp8_gemm_efficiency");
  factor_at_bound(fs.fit_fp4, 3, fs.fp4_bounds, "fp4_gemm_efficiency");
  factor_at_bound(fs.fit_stack, 1, fs.stack_bounds, "pytorch_fsdp_efficiency");
}

// 2. Polish start `s` (of `polish`) of the screen with Ceres; *best becomes
// it when it is usable and costs less.
void polish_start(const std::vector<AccuracyCase>& cases, const AccuracyConstants& initial,
                  const CalibrationOptions& options, const FitSetup& fs, const Screen& sc, int s,
                  int polish, const std::function<void(const std::string&)>& add_line,
                  CalibrationResult* result) {
  CalibrationResult& best = *result;
  const auto& grid = sc.grid;
  const auto& order = sc.order;
  const std::vector<double>& screen_cost = sc.screen_cost;
  char line[256];
  double r[kRooflineParams];
  double n[kNetworkParams] = {fs.n0[0], fs.n0[1]};
  double f[kFactorParams] = {fs.f0[0], fs.f0[1], fs.f0[2], fs.f0[3]};
  std::copy(grid[order[s]].begin(), grid[order[s]].end(), r);
  ceres::Problem problem;
  ceres::NumericDiffOptions diff;
  diff.relative_step_size = 1e-3;
  for (const AccuracyCase& c : cases) {
    auto* cost = new ceres::NumericDiffCostFunction<LogTimeResidual, ceres::FORWARD, 1,
                                                    kRooflineParams, kNetworkParams,
                                                    kFactorParams>(
        new LogTimeResidual{&c, &initial}, ceres::TAKE_OWNERSHIP, 1, diff);
    problem.AddResidualBlock(cost, new ceres::HuberLoss(kHuberDelta), r, n, f);
  }
  bound_parameters(fs, options, r, n, f, &problem);
  ceres::Solver::Options solver = polish_solver_options(options, options.max_iterations);
  ProgressCallback callback(options, s + 1, polish);
  if (options.on_progress) solver.callbacks.push_back(&callback);
  ceres::Solver::Summary summary;
  ceres::Solve(solver, &problem, &summary);
  std::snprintf(
      line, sizeof line, "start %d (screen cost %.6g): cost %.6g after %d iterations (%s)\n", s,
      screen_cost[order[s]], summary.final_cost, static_cast<int>(summary.iterations.size()),
      summary.IsSolutionUsable() ? "usable" : "failed");
  add_line(line);
  ++best.starts;
  if (summary.IsSolutionUsable() && summary.final_cost < best.cost) {
    best.cost = summary.final_cost;
    best.constants = to_constants(initial, r, n, f);
    best.at_bound.clear();
    record_at_bounds(fs, options, r, f, &best.at_bound);
  }
}

}  // namespace

// Ceres' cost (1/2 sum of Huber(r^2)) of the constants: the screening
// objective, equal to what the solver minimises (declared in restricted_fit.h, which
// screens with it too).
Result<double> robust_cost(const std::vector<AccuracyCase>& cases, const AccuracyConstants& k) {
  std::vector<AccuracyCase> trial = cases;
  apply_constants(k, &trial);
  LLMPLAN_ASSIGN_OR_RETURN(std::vector<double> pred, predict_iteration_times(trial, nullptr));
  const ceres::HuberLoss loss(kHuberDelta);
  double cost = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const double r = std::log(pred[i] / cases[i].run.iteration_time_s);
    double rho[3];
    loss.Evaluate(r * r, rho);
    cost += 0.5 * rho[0];
  }
  return cost;
}

Result<CalibrationResult> calibrate(const std::vector<AccuracyCase>& cases,
                                    const AccuracyConstants& initial,
                                    const CalibrationOptions& options) {
  if (cases.empty()) return Status::invalid_argument("calibrate: no measured runs");
  if (options.starts < 1 || options.starts > kCalibrationScreenPoints) {
    return Status::invalid_argument("calibrate: starts must be from 1 to " +
                                    std::to_string(kCalibrationScreenPoints));
  }
  if (options.max_iterations < 1 || options.max_iterations > kMaxCalibrationIterations) {
    return Status::invalid_argument("calibrate: max_iterations must be from 1 to " +
                                    std::to_string(kMaxCalibrationIterations));
  }
  // Rows too few for the full fit: the restricted fit (#26).
  if (use_restricted_fit(cases, options)) return calibrate_restricted(cases, initial, options);
  CalibrationResult best;
  best.cost = std::numeric_limits<double>::infinity();
  const auto add_line = [&](const std::string& text) {
    best.summary += text;
    if (options.on_line) options.on_line(text);
  };
  const FitSetup fs = fit_setup(cases, initial, options);
  LLMPLAN_ASSIGN_OR_RETURN(const Screen sc, screen_starts(cases, initial, options, fs, add_line));

  // 2. Polish the best `starts` points with Ceres.
  const int polish = std::min<int>(options.starts, static_cast<int>(sc.grid.size()));
  for (int s = 0; s < polish; ++s) {
    polish_start(cases, initial, options, fs, sc, s, polish, add_line, &best);
  }
  if (!std::isfinite(best.cost)) {
    return Status::internal("calibrate: none of the " + std::to_string(best.starts) +
                            " polished starts gave a usable solution (try more --starts or "
                            "--max-iterations)");
  }
  for (const std::string& b : best.at_bound) add_line("note: " + b + "\n");
  // A fit with no more rows than constants matches any rows (issue 31: one
  // row gave "MAPE 0.98 %"): a result, but one that says it identifies
  // nothing.
  const size_t fitted_constants = kRooflineParams - (fs.fit_16bit ? 0 : 1) +
                                  (options.fit_network ? kNetworkParams : 0) +
                                  (options.fit_flash_attention ? 1 : 0) + (fs.fit_stack ? 1 : 0) +
                                  (fs.fit_fp8 ? 1 : 0) + (fs.fit_fp4 ? 1 : 0);
  if (cases.size() <= fitted_constants) {
    add_line("warning: " + std::to_string(cases.size()) + " rows for " +
             std::to_string(fitted_constants) +
             " fitted constants: the fit is underdetermined and its MAPE means nothing; "
             "calibrate on more rows than constants\n");
  }
  LLMPLAN_ASSIGN_OR_RETURN(best.in_sample_mape, in_sample_mape(cases, best.constants));
  return best;
}

}  // namespace llmplan::planner

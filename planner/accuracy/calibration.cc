// Ceres fit of the Roofline (and network) constants; see accuracy.h.
#include <ceres/ceres.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "planner/accuracy/accuracy.h"
#include "simulator/simulate.h"

namespace llmplan::planner {
namespace {

constexpr int kRooflineParams = 6;
constexpr int kNetworkParams = 2;

// Parameters in solver units (so that steps are of similar size):
// gemm_efficiency, gemm_dim_half / 100, memory_efficiency,
// kernel_overhead_us, microbatch_overhead_ms, iteration_overhead_ms;
// nic_efficiency, nic_latency_us.
struct Bounds {
  double lo, hi;
};
constexpr Bounds kRooflineBounds[kRooflineParams] = {
    {0.2, 1.0}, {0.0, 10.0}, {0.2, 1.0}, {0.0, 300.0}, {0.0, 50.0}, {0.0, 1000.0}};
constexpr Bounds kNetworkBounds[kNetworkParams] = {{0.1, 1.0}, {0.0, 200.0}};

AccuracyConstants to_constants(const AccuracyConstants& base, const double* r, const double* n) {
  AccuracyConstants c = base;
  // Forward differences may step just past an upper bound of 1.
  c.roofline.gemm_efficiency = std::min(r[0], 1.0);
  c.roofline.gemm_dim_half = r[1] * 100.0;
  c.roofline.memory_efficiency = std::min(r[2], 1.0);
  c.roofline.kernel_overhead_s = r[3] * 1e-6;
  c.roofline.microbatch_overhead_s = r[4] * 1e-3;
  c.roofline.iteration_overhead_s = r[5] * 1e-3;
  c.network.nic_efficiency = std::min(n[0], 1.0);
  c.network.nic_latency_s = n[1] * 1e-6;
  return c;
}

// One measured run: residual log(predicted / measured).
struct LogTimeResidual {
  const AccuracyCase* c;
  const AccuracyConstants* base;

  bool operator()(const double* r, const double* n, double* residual) const {
    const AccuracyConstants k = to_constants(*base, r, n);
    simulator::Cluster cluster = c->config.cluster;
    cluster.gpu.roofline = k.roofline;
    cluster.network.nvlink_latency_s = k.network.nvlink_latency_s;
    cluster.network.nic_latency_s = k.network.nic_latency_s;
    cluster.network.nic_efficiency = k.network.nic_efficiency;
    Result<simulator::StepReport> rep = simulator::simulate(c->config.model, c->config.plan, cluster);
    if (!rep.ok() || !(rep->iteration_time_s > 0)) return false;
    residual[0] = std::log(rep->iteration_time_s / c->run.iteration_time_s);
    return true;
  }
};

}  // namespace

Result<CalibrationResult> calibrate(const std::vector<AccuracyCase>& cases,
                                    const AccuracyConstants& initial,
                                    const CalibrationOptions& options) {
  if (cases.empty()) return Status::invalid_argument("calibrate: no measured runs");
  // Deterministic starting points spanning the plausible range.
  const double starts[][kRooflineParams] = {
      {0.70, 0.64, 0.70, 40.0, 1.0, 10.0},
      {0.55, 2.00, 0.50, 80.0, 5.0, 100.0},
      {0.85, 0.16, 0.85, 20.0, 0.2, 1.0},
  };
  CalibrationResult best;
  best.cost = std::numeric_limits<double>::infinity();
  char line[256];
  for (const auto& start : starts) {
    double r[kRooflineParams];
    double n[kNetworkParams] = {initial.network.nic_efficiency,
                                initial.network.nic_latency_s * 1e6};
    for (int i = 0; i < kRooflineParams; ++i) r[i] = start[i];
    ceres::Problem::Options problem_options;
    ceres::Problem problem(problem_options);
    ceres::NumericDiffOptions diff;
    diff.relative_step_size = 1e-3;
    for (const AccuracyCase& c : cases) {
      auto* cost = new ceres::NumericDiffCostFunction<LogTimeResidual, ceres::FORWARD, 1,
                                                      kRooflineParams, kNetworkParams>(
          new LogTimeResidual{&c, &initial}, ceres::TAKE_OWNERSHIP, 1, diff);
      problem.AddResidualBlock(cost, new ceres::HuberLoss(0.1), r, n);
    }
    for (int i = 0; i < kRooflineParams; ++i) {
      problem.SetParameterLowerBound(r, i, kRooflineBounds[i].lo);
      problem.SetParameterUpperBound(r, i, kRooflineBounds[i].hi);
    }
    for (int i = 0; i < kNetworkParams; ++i) {
      problem.SetParameterLowerBound(n, i, kNetworkBounds[i].lo);
      problem.SetParameterUpperBound(n, i, kNetworkBounds[i].hi);
    }
    if (!options.fit_network) problem.SetParameterBlockConstant(n);
    ceres::Solver::Options solver;
    solver.linear_solver_type = ceres::DENSE_QR;
    solver.max_num_iterations = options.max_iterations;
    solver.num_threads = options.num_threads;
    solver.function_tolerance = 1e-7;
    solver.logging_type = ceres::SILENT;
    ceres::Solver::Summary summary;
    ceres::Solve(solver, &problem, &summary);
    std::snprintf(line, sizeof line, "start %d: cost %.6g after %d iterations (%s)\n",
                  best.starts, summary.final_cost,
                  static_cast<int>(summary.iterations.size()),
                  summary.IsSolutionUsable() ? "usable" : "failed");
    best.summary += line;
    ++best.starts;
    if (summary.IsSolutionUsable() && summary.final_cost < best.cost) {
      best.cost = summary.final_cost;
      best.constants = to_constants(initial, r, n);
    }
  }
  if (!std::isfinite(best.cost)) {
    return Status::internal("calibrate: no start converged:\n" + best.summary);
  }
  std::vector<AccuracyCase> fitted = cases;
  apply_constants(best.constants, &fitted);
  LLMPLAN_ASSIGN_OR_RETURN(std::vector<double> pred, predict_iteration_times(fitted, nullptr));
  std::vector<double> meas;
  for (const AccuracyCase& c : cases) meas.push_back(c.run.iteration_time_s);
  best.in_sample_mape = summarise(pred, meas).mape;
  return best;
}

}  // namespace llmplan::planner

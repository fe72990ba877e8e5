// Ceres fit of the Roofline (and network) constants; see accuracy.h.
#include <ceres/ceres.h>

#include <algorithm>
#include <array>
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
constexpr double kHuberDelta = 0.03;  // on log(predicted / measured)

// Parameters in solver units (so that steps are of similar size):
// gemm_efficiency, gemm_dim_half / 100, memory_efficiency,
// kernel_overhead_us, microbatch_overhead_ms, iteration_overhead_ms,
// host_run_ahead_s / 100 us; nic_efficiency, nic_latency_us.
struct Bounds {
  double lo, hi;
};
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

// The MoE constants in solver units: grouped_gemm_expert_overhead_s in us,
// moe_a2a_efficiency, moe_a2a_nic_efficiency.
constexpr int kMoeParams = 3;

AccuracyConstants to_moe_constants(const AccuracyConstants& base, const double* m) {
  AccuracyConstants c = base;
  c.roofline.grouped_gemm_expert_overhead_s = std::max(0.0, m[0]) * 1e-6;
  // Forward differences may step just past an upper bound.
  c.roofline.moe_a2a_efficiency = std::clamp(m[1], 1e-3, 1.0);
  c.roofline.moe_a2a_nic_efficiency = m[2] > 0 ? std::clamp(m[2], 1e-3, 1.0) : 0.0;
  return c;
}

struct MoeLogTimeResidual {
  const AccuracyCase* c;
  const AccuracyConstants* base;

  bool operator()(const double* m, double* residual) const {
    AccuracyCase trial = *c;
    trial.config.cluster.gpu.roofline = to_moe_constants(*base, m).roofline;
    Result<simulator::StepReport> rep =
        simulator::simulate(c->config.model, c->config.plan, case_cluster(trial));
    if (!rep.ok() || !(rep->iteration_time_s > 0)) return false;
    residual[0] = std::log(rep->iteration_time_s / c->run.iteration_time_s);
    return true;
  }
};

// MAPE of `cases` predicted with `constants`.
Result<double> in_sample_mape(const std::vector<AccuracyCase>& cases,
                              const AccuracyConstants& constants) {
  std::vector<AccuracyCase> fitted = cases;
  apply_constants(constants, &fitted);
  LLMPLAN_ASSIGN_OR_RETURN(std::vector<double> pred, predict_iteration_times(fitted, nullptr));
  std::vector<double> meas;
  for (const AccuracyCase& c : cases) meas.push_back(c.run.iteration_time_s);
  return summarise(pred, meas).mape;
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

Result<MoeCalibrationResult> calibrate_moe(const std::vector<AccuracyCase>& cases,
                                           const AccuracyConstants& base,
                                           const CalibrationOptions& options) {
  if (cases.empty()) return Status::invalid_argument("calibrate: no mixture-of-experts row to fit");
  for (const AccuracyCase& c : cases) {
    if (!c.config.model.is_moe()) {
      return Status::invalid_argument("calibrate_moe: " + c.name + " is a dense row");
    }
  }
  // Bounds (solver units). The per-expert overhead: 0 to 10 us, above the
  // 6-8 us per expert the project's H100 profile measured for a loop of
  // per-expert cuBLAS GEMMs over the strided-batched GEMM
  // (data/profiles/README.md, "Implementations and imbalance"). The
  // all-to-all: at most 0.81 of one NVLink direction, the best published MoE
  // dispatch/combine: DeepEP V2 on SM100, EP 8, 726 / 740 GB/s of 900 GB/s
  // (github.com/deepseek-ai/DeepEP README, Performance); DeepEP V1 on H800
  // reached 153 / 158 GB/s of its ~160 GB/s usable (200 GB/s nominal: 0.77;
  // docs/legacy.md).
  // The lower bound of both all-to-all efficiencies: 0.2, below the
  // slowest published MoE all-to-all we know (DeepEP's combine at EP 32 on
  // GB200 NVL72, 190 GB/s of 900: 0.21, the Megatron-LM DeepSeek-V3 GB200
  // write-up quoted in presets/clusters.json). The NIC's upper bound: 1
  // (DeepEP's internode kernels, 43-58 GB/s of a ~50 GB/s CX7 NIC).
  const Bounds bounds[kMoeParams] = {{0.0, kGroupedGemmExpertOverheadCeilingS * 1e6},
                                     {kMoeA2aEfficiencyFloor, kMoeA2aEfficiencyCeiling},
                                     {kMoeA2aEfficiencyFloor, 1.0}};
  const char* names[kMoeParams] = {"grouped_gemm_expert_overhead_s", "moe_a2a_efficiency",
                                   "moe_a2a_nic_efficiency"};
  // The NIC efficiency only when some row's expert group spans NVLink
  // domains (otherwise nothing constrains it: held at 0, the cluster's).
  const bool fit_nic = std::any_of(cases.begin(), cases.end(), [](const AccuracyCase& c) {
    const simulator::Plan& p = c.config.plan;
    return p.expert_parallel > c.config.cluster.nvlink_domain();
  });
  // Screen a fixed grid, polish the best two.
  std::vector<std::array<double, kMoeParams>> grid;
  for (double us : {0.0, 3.0, 8.0}) {
    for (double a2a : {0.25, 0.5, 0.8}) {
      for (double nic : {0.4, 0.7, 1.0}) {
        if (fit_nic || nic == 0.4) grid.push_back({us, a2a, fit_nic ? nic : 0.0});
      }
    }
  }
  std::vector<double> screen(grid.size());
  for (size_t g = 0; g < grid.size(); ++g) {
    LLMPLAN_ASSIGN_OR_RETURN(screen[g], robust_cost(cases, to_moe_constants(base, grid[g].data())));
  }
  std::vector<size_t> order(grid.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return screen[a] < screen[b]; });
  MoeCalibrationResult best;
  best.cost = std::numeric_limits<double>::infinity();
  for (int s = 0; s < 2; ++s) {
    double m[kMoeParams] = {grid[order[s]][0], grid[order[s]][1], grid[order[s]][2]};
    ceres::Problem problem;
    ceres::NumericDiffOptions diff;
    diff.relative_step_size = 1e-3;
    for (const AccuracyCase& c : cases) {
      auto* cost = new ceres::NumericDiffCostFunction<MoeLogTimeResidual, ceres::CENTRAL, 1,
                                                      kMoeParams>(
          new MoeLogTimeResidual{&c, &base}, ceres::TAKE_OWNERSHIP, 1, diff);
      problem.AddResidualBlock(cost, new ceres::HuberLoss(kHuberDelta), m);
    }
    for (int i = 0; i < kMoeParams; ++i) {
      if (i == 2 && !fit_nic) continue;
      problem.SetParameterLowerBound(m, i, bounds[i].lo);
      problem.SetParameterUpperBound(m, i, bounds[i].hi);
    }
    if (!fit_nic) problem.SetManifold(m, new ceres::SubsetManifold(kMoeParams, {2}));
    ceres::Solver::Options solver =
        polish_solver_options(options, std::min(options.max_iterations, 200));
    ceres::Solver::Summary summary;
    ceres::Solve(solver, &problem, &summary);
    // The screened point itself when the polish fails or does worse.
    const double polished = summary.IsSolutionUsable() ? summary.final_cost
                                                       : std::numeric_limits<double>::infinity();
    const double* x = polished <= screen[order[s]] ? m : grid[order[s]].data();
    const double cost = std::min(polished, screen[order[s]]);
    if (cost < best.cost) {
      best.cost = cost;
      best.constants = to_moe_constants(base, x);
      best.at_bound.clear();
      for (int i = 0; i < (fit_nic ? kMoeParams : 2); ++i) {
        if (x[i] <= bounds[i].lo + 1e-9) best.at_bound.push_back(std::string(names[i]) + " at its lower bound");
        if (x[i] >= bounds[i].hi - 1e-9) best.at_bound.push_back(std::string(names[i]) + " at its upper bound");
      }
    }
  }
  if (fit_nic) {
    // Spanning nodes is not enough for the rows to determine the NIC
    // figure: a flex dispatcher that sends one RDMA copy per token and node
    // can be bound by its NVLink forwarding instead (Qwen3-30B-A3B's H100
    // EP 16 rows: the same step time for any NIC efficiency from about 0.4
    // to 1). The solver then stops wherever the screen started it, and that
    // value decides every NIC-bound model it is carried to. So a fitted NIC
    // efficiency is kept only if replacing it by the cluster's figure (0:
    // Cluster::network.nic_efficiency) moves some row's step by at least
    // kMoeNicIdentifiedChange; otherwise the cluster's figure is used.
    AccuracyConstants held = best.constants;
    held.roofline.moe_a2a_nic_efficiency = 0.0;
    std::vector<AccuracyCase> fitted = cases, reverted = cases;
    apply_constants(best.constants, &fitted);
    apply_constants(held, &reverted);
    LLMPLAN_ASSIGN_OR_RETURN(const std::vector<double> with_fit,
                             predict_iteration_times(fitted, nullptr));
    LLMPLAN_ASSIGN_OR_RETURN(const std::vector<double> with_cluster,
                             predict_iteration_times(reverted, nullptr));
    double largest = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
      largest = std::max(largest, std::abs(std::log(with_fit[i] / with_cluster[i])));
    }
    if (largest < kMoeNicIdentifiedChange) {
      // Undetermined, or equal to the cluster's figure (B200: 0.79 fitted
      // against its 0.8)? A NIC figure a quarter below the cluster's tells
      // them apart (Qwen3-30B-A3B's flex rows above stay flat down to about
      // 0.4, half of H100's 0.8).
      AccuracyConstants floor = held;
      floor.roofline.moe_a2a_nic_efficiency =
          std::max(kMoeA2aEfficiencyFloor, 0.75 * held.network.nic_efficiency);
      std::vector<AccuracyCase> at_floor = cases;
      apply_constants(floor, &at_floor);
      LLMPLAN_ASSIGN_OR_RETURN(const std::vector<double> with_floor,
                               predict_iteration_times(at_floor, nullptr));
      for (size_t i = 0; i < cases.size(); ++i) {
        if (std::abs(std::log(with_floor[i] / with_cluster[i])) >= kMoeNicIdentifiedChange) {
          best.nic_matches_cluster = true;
        }
      }
      best.constants = held;
      best.nic_held = true;
      std::erase_if(best.at_bound, [](const std::string& b) {
        return b.rfind("moe_a2a_nic_efficiency", 0) == 0;
      });
    }
  }
  LLMPLAN_ASSIGN_OR_RETURN(best.in_sample_mape, in_sample_mape(cases, best.constants));
  return best;
}

bool has_mamba_layers(const AccuracyCase& c) {
  return c.config.model.layer_pattern.find('M') != std::string::npos;
}

Result<SsdCalibrationResult> calibrate_ssd(const std::vector<AccuracyCase>& cases,
                                           const AccuracyConstants& base) {
  if (cases.empty()) return Status::invalid_argument("calibrate: no hybrid (Mamba) row to fit");
  for (const AccuracyCase& c : cases) {
    if (!has_mamba_layers(c)) {
      return Status::invalid_argument("calibrate_ssd: " + c.name + " has no Mamba layers");
    }
  }
  const double lo = std::log(kSsdScanEfficiencyFloor);
  const double hi =
      std::log(std::min(1.0, cases.front().config.cluster.gpu.ceilings.flash_attention_efficiency));
  const auto at = [&](double log_e) {
    AccuracyConstants k = base;
    k.roofline.ssd_scan_efficiency = std::exp(log_e);
    return k;
  };
  // Golden-section search on log(efficiency): the cost is smooth and, for
  // the scan's one kernel, unimodal in it.
  const double g = (std::sqrt(5.0) - 1.0) / 2.0;
  double a = lo, b = hi;
  double x1 = b - g * (b - a), x2 = a + g * (b - a);
  LLMPLAN_ASSIGN_OR_RETURN(double f1, robust_cost(cases, at(x1)));
  LLMPLAN_ASSIGN_OR_RETURN(double f2, robust_cost(cases, at(x2)));
  for (int i = 0; i < 60; ++i) {
    if (f1 <= f2) {
      b = x2;
      x2 = x1;
      f2 = f1;
      x1 = b - g * (b - a);
      LLMPLAN_ASSIGN_OR_RETURN(f1, robust_cost(cases, at(x1)));
    } else {
      a = x1;
      x1 = x2;
      f1 = f2;
      x2 = a + g * (b - a);
      LLMPLAN_ASSIGN_OR_RETURN(f2, robust_cost(cases, at(x2)));
    }
  }
  SsdCalibrationResult best;
  const double x = f1 <= f2 ? x1 : x2;
  best.cost = std::min(f1, f2);
  // Round to 4 significant digits, as the presets store it.
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", std::exp(x));
  best.constants = base;
  best.constants.roofline.ssd_scan_efficiency = std::strtod(buf, nullptr);
  if (x <= lo + 1e-3) best.at_bound.push_back("ssd_scan_efficiency at its lower bound");
  if (x >= hi - 1e-3) best.at_bound.push_back("ssd_scan_efficiency at its upper bound");
  LLMPLAN_ASSIGN_OR_RETURN(best.in_sample_mape, in_sample_mape(cases, best.constants));
  return best;
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
  char line[256];

  // 1. Screen: one simulation per case per grid point; keep the best few.
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
  auto grid = screen_points();
  for (auto& point : grid) {  // starting points inside the (ceiling-lowered) bounds
    for (int i = 0; i < kRooflineParams; ++i) {
      point[i] = std::clamp(point[i], bounds[i].lo, bounds[i].hi);
    }
    if (!fit_16bit) point[0] = initial.roofline.gemm_efficiency;
  }
  if (!fit_16bit) {
    std::snprintf(line, sizeof line,
                  "gemm_efficiency held at %.4g (no 16-bit run among the fitted rows)\n",
                  initial.roofline.gemm_efficiency);
    add_line(line);
  }
  std::vector<double> screen_cost(grid.size());
  double best_screen = std::numeric_limits<double>::infinity();
  for (size_t g = 0; g < grid.size(); ++g) {
    LLMPLAN_ASSIGN_OR_RETURN(screen_cost[g],
                             robust_cost(cases, to_constants(initial, grid[g].data(), n0, f0)));
    best_screen = std::min(best_screen, screen_cost[g]);
    if (options.on_progress) {
      options.on_progress({CalibrationProgress::Stage::kScreen, static_cast<int>(g) + 1,
                           static_cast<int>(grid.size()), 0, best_screen});
    }
  }
  std::vector<size_t> order(grid.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return screen_cost[a] < screen_cost[b]; });
  std::snprintf(line, sizeof line, "screened %zu starting points: best cost %.6g\n", grid.size(),
                screen_cost[order.front()]);
  add_line(line);

  // 2. Polish the best `starts` points with Ceres.
  const int polish = std::min<int>(options.starts, static_cast<int>(grid.size()));
  for (int s = 0; s < polish; ++s) {
    double r[kRooflineParams];
    double n[kNetworkParams] = {n0[0], n0[1]};
    double f[kFactorParams] = {f0[0], f0[1], f0[2], f0[3]};
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
    for (int i = fit_16bit ? 0 : 1; i < kRooflineParams; ++i) {
      problem.SetParameterLowerBound(r, i, bounds[i].lo);
      problem.SetParameterUpperBound(r, i, bounds[i].hi);
    }
    if (!fit_16bit) problem.SetManifold(r, new ceres::SubsetManifold(kRooflineParams, {0}));
    for (int i = 0; i < kNetworkParams; ++i) {
      problem.SetParameterLowerBound(n, i, kNetworkBounds[i].lo);
      problem.SetParameterUpperBound(n, i, kNetworkBounds[i].hi);
    }
    if (!options.fit_network) problem.SetParameterBlockConstant(n);
    std::vector<int> fixed;
    if (options.fit_flash_attention) {
      problem.SetParameterLowerBound(f, 0, flash_bounds.lo);
      problem.SetParameterUpperBound(f, 0, flash_bounds.hi);
    } else {
      fixed.push_back(0);
    }
    if (fit_stack) {
      problem.SetParameterLowerBound(f, 1, stack_bounds.lo);
      problem.SetParameterUpperBound(f, 1, stack_bounds.hi);
    } else {
      fixed.push_back(1);
    }
    if (fit_fp8) {
      problem.SetParameterLowerBound(f, 2, fp8_bounds.lo);
      problem.SetParameterUpperBound(f, 2, fp8_bounds.hi);
    } else {
      fixed.push_back(2);
    }
    if (fit_fp4) {
      problem.SetParameterLowerBound(f, 3, fp4_bounds.lo);
      problem.SetParameterUpperBound(f, 3, fp4_bounds.hi);
    } else {
      fixed.push_back(3);
    }
    if (fixed.size() == kFactorParams) {
      problem.SetParameterBlockConstant(f);
    } else if (!fixed.empty()) {
      problem.SetManifold(f, new ceres::SubsetManifold(kFactorParams, fixed));
    }
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
      for (int i = fit_16bit ? 0 : 1; i < kRooflineParams; ++i) {
        const bool lo = r[i] <= bounds[i].lo + 1e-9;
        const bool hi = r[i] >= bounds[i].hi - 1e-9;
        if (lo || hi) {
          best.at_bound.push_back(std::string(kRooflineNames[i]) +
                                  (lo ? " at its lower bound" : " at its upper bound"));
        }
      }
      if (options.fit_flash_attention &&
          (f[0] <= flash_bounds.lo + 1e-9 || f[0] >= flash_bounds.hi - 1e-9)) {
        best.at_bound.push_back(std::string("flash_attention_efficiency") +
                                (f[0] <= flash_bounds.lo + 1e-9 ? " at its lower bound"
                                                                : " at its upper bound"));
      }
      if (fit_fp8 && (f[2] <= fp8_bounds.lo + 1e-9 || f[2] >= fp8_bounds.hi - 1e-9)) {
        best.at_bound.push_back(std::string("fp8_gemm_efficiency") +
                                (f[2] <= fp8_bounds.lo + 1e-9 ? " at its lower bound"
                                                              : " at its upper bound"));
      }
      if (fit_fp4 && (f[3] <= fp4_bounds.lo + 1e-9 || f[3] >= fp4_bounds.hi - 1e-9)) {
        best.at_bound.push_back(std::string("fp4_gemm_efficiency") +
                                (f[3] <= fp4_bounds.lo + 1e-9 ? " at its lower bound"
                                                              : " at its upper bound"));
      }
      if (fit_stack && (f[1] <= stack_bounds.lo + 1e-9 || f[1] >= stack_bounds.hi - 1e-9)) {
        best.at_bound.push_back(std::string("pytorch_fsdp_efficiency") +
                                (f[1] <= stack_bounds.lo + 1e-9 ? " at its lower bound"
                                                                : " at its upper bound"));
      }
    }
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
  const size_t fitted_constants = kRooflineParams - (fit_16bit ? 0 : 1) +
                                  (options.fit_network ? kNetworkParams : 0) +
                                  (options.fit_flash_attention ? 1 : 0) + (fit_stack ? 1 : 0) +
                                  (fit_fp8 ? 1 : 0) + (fit_fp4 ? 1 : 0);
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

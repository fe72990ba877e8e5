// The Ceres fit of the mixture-of-experts constants and the golden-section
// fit of ssd_scan_efficiency (accuracy.h: calibrate_moe, calibrate_ssd).
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
constexpr Bounds kMoeBounds[kMoeParams] = {{0.0, kGroupedGemmExpertOverheadCeilingS * 1e6},
                                           {kMoeA2aEfficiencyFloor, kMoeA2aEfficiencyCeiling},
                                           {kMoeA2aEfficiencyFloor, 1.0}};
constexpr const char* kMoeNames[kMoeParams] = {"grouped_gemm_expert_overhead_s",
                                               "moe_a2a_efficiency", "moe_a2a_nic_efficiency"};

// The screen's grid of starting points (the NIC efficiency only when
// `fit_nic`; otherwise held at 0, the cluster's).
std::vector<std::array<double, kMoeParams>> moe_grid(bool fit_nic) {
  std::vector<std::array<double, kMoeParams>> grid;
  for (double us : {0.0, 3.0, 8.0}) {
    for (double a2a : {0.25, 0.5, 0.8}) {
      for (double nic : {0.4, 0.7, 1.0}) {
        if (fit_nic || nic == 0.4) grid.push_back({us, a2a, fit_nic ? nic : 0.0});
      }
    }
  }
  return grid;
}

// One Ceres polish from the screened point `start` (of cost
// `screen_cost`); *best becomes it when it costs less.
void polish_moe(const std::vector<AccuracyCase>& cases, const AccuracyConstants& base,
                const CalibrationOptions& options, bool fit_nic,
                const std::array<double, kMoeParams>& start, double screen_cost,
                MoeCalibrationResult* best) {
  double m[kMoeParams] = {start[0], start[1], start[2]};
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
    problem.SetParameterLowerBound(m, i, kMoeBounds[i].lo);
    problem.SetParameterUpperBound(m, i, kMoeBounds[i].hi);
  }
  if (!fit_nic) problem.SetManifold(m, new ceres::SubsetManifold(kMoeParams, {2}));
  ceres::Solver::Options solver =
      polish_solver_options(options, std::min(options.max_iterations, 200));
  ceres::Solver::Summary summary;
  ceres::Solve(solver, &problem, &summary);
  // The screened point itself when the polish fails or does worse.
  const double polished = summary.IsSolutionUsable() ? summary.final_cost
                                                     : std::numeric_limits<double>::infinity();
  const double* x = polished <= screen_cost ? m : start.data();
  const double cost = std::min(polished, screen_cost);
  if (cost < best->cost) {
    best->cost = cost;
    best->constants = to_moe_constants(base, x);
    best->at_bound.clear();
    for (int i = 0; i < (fit_nic ? kMoeParams : 2); ++i) {
      if (x[i] <= kMoeBounds[i].lo + 1e-9) {
        best->at_bound.push_back(std::string(kMoeNames[i]) + " at its lower bound");
      }
      if (x[i] >= kMoeBounds[i].hi - 1e-9) {
        best->at_bound.push_back(std::string(kMoeNames[i]) + " at its upper bound");
      }
    }
  }
}

// With the NIC efficiency fitted: holds the cluster's figure instead where
// the fitted one is not determined by the rows (below).
Status hold_unidentified_nic(const std::vector<AccuracyCase>& cases, MoeCalibrationResult* best) {
  // Spanning nodes is not enough for the rows to determine the NIC
  // figure: a flex dispatcher that sends one RDMA copy per token and node
  // can be bound by its NVLink forwarding instead (Qwen3-30B-A3B's H100
  // EP 16 rows: the same step time for any NIC efficiency from about 0.4
  // to 1). The solver then stops wherever the screen started it, and that
  // value decides every NIC-bound model it is carried to. So a fitted NIC
  // efficiency is kept only if replacing it by the cluster's figure (0:
  // Cluster::network.nic_efficiency) moves some row's step by at least
  // kMoeNicIdentifiedChange; otherwise the cluster's figure is used.
  AccuracyConstants held = best->constants;
  held.roofline.moe_a2a_nic_efficiency = 0.0;
  std::vector<AccuracyCase> fitted = cases, reverted = cases;
  apply_constants(best->constants, &fitted);
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
        best->nic_matches_cluster = true;
      }
    }
    best->constants = held;
    best->nic_held = true;
    std::erase_if(best->at_bound, [](const std::string& b) {
      return b.rfind("moe_a2a_nic_efficiency", 0) == 0;
    });
  }
  return Status();
}

}  // namespace

Result<MoeCalibrationResult> calibrate_moe(const std::vector<AccuracyCase>& cases,
                                           const AccuracyConstants& base,
                                           const CalibrationOptions& options) {
  if (cases.empty()) return Status::invalid_argument("calibrate: no mixture-of-experts row to fit");
  for (const AccuracyCase& c : cases) {
    if (!c.config.model.is_moe()) {
      return Status::invalid_argument("calibrate_moe: " + c.name + " is a dense row");
    }
  }
  // The NIC efficiency only when some row's expert group spans NVLink
  // domains (otherwise nothing constrains it: held at 0, the cluster's).
  const bool fit_nic = std::any_of(cases.begin(), cases.end(), [](const AccuracyCase& c) {
    const simulator::Plan& p = c.config.plan;
    return p.expert_parallel > c.config.cluster.nvlink_domain();
  });
  // Screen a fixed grid, polish the best two.
  const std::vector<std::array<double, kMoeParams>> grid = moe_grid(fit_nic);
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
    polish_moe(cases, base, options, fit_nic, grid[order[s]], screen[order[s]], &best);
  }
  if (fit_nic) LLMPLAN_RETURN_IF_ERROR(hold_unidentified_nic(cases, &best));
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

}  // namespace llmplan::planner

// The restricted dense fit; see restricted_fit.h.
#include "planner/accuracy/restricted_fit.h"
#include "planner/accuracy/solver_options.h"

#include <ceres/ceres.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "simulator/simulate.h"

namespace llmplan::planner {
namespace {

// The most constants a restricted fit frees (the candidate list's length).
constexpr int kMaxFree = 5;
// The most solver parameters: the free constants plus, in a pooled fit, the
// pool GPU's own GEMM scales (at most 3).
constexpr int kMaxParams = kMaxFree + 3;
// calibrate()'s bound of kernel_overhead_s (300 us).
constexpr double kKernelOverheadMaxS = 300e-6;

bool is_gemm_scale(const std::string& name) {
  return name == "gemm_efficiency" || name == "fp8_gemm_efficiency" ||
         name == "fp4_gemm_efficiency";
}

double ceiling_of(const std::string& gemm, const simulator::RooflineCeilings& c) {
  if (gemm == "fp8_gemm_efficiency") return c.fp8_gemm_efficiency;
  if (gemm == "fp4_gemm_efficiency") return c.fp4_gemm_efficiency;
  return c.gemm_efficiency;
}

double* gemm_field(const std::string& gemm, simulator::RooflineConstants* r) {
  if (gemm == "fp8_gemm_efficiency") return &r->fp8_gemm_efficiency;
  if (gemm == "fp4_gemm_efficiency") return &r->fp4_gemm_efficiency;
  return &r->gemm_efficiency;
}

// `value` as a fraction of `ceiling` (at most 1; the value itself when no
// ceiling is known).
double fraction_of(double value, double ceiling) {
  return ceiling > 0 && ceiling < 1 ? std::min(1.0, value / ceiling) : value;
}

// One GPU's rows of a restricted fit (the cases, or a pooled fit's pool):
// its GPU, its held constants and, for each free constant, the solver
// parameter that sets it (GEMM scales per GPU, the rest shared).
struct FitGroup {
  const std::vector<AccuracyCase>* cases = nullptr;
  const simulator::GpuSpec* gpu = nullptr;
  AccuracyConstants prior;
  std::vector<int> index;

  std::vector<double> values(const double* x) const {
    std::vector<double> v;
    for (int i : index) v.push_back(x[i]);
    return v;
  }
};

struct RestrictedResidual {
  const AccuracyCase* c;
  const FitGroup* group;
  const std::vector<FreeConstant>* free;

  bool operator()(const double* x, double* residual) const {
    AccuracyCase trial = *c;
    trial.config.cluster.gpu.roofline =
        restricted_constants(group->prior, *group->gpu, *free, group->values(x)).roofline;
    Result<simulator::StepReport> rep =
        simulator::simulate(c->config.model, c->config.plan, case_cluster(trial));
    if (!rep.ok() || !(rep->iteration_time_s > 0)) return false;
    residual[0] = std::log(rep->iteration_time_s / c->run.iteration_time_s);
    return true;
  }
};


std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

FreeSet select_free_constants(const std::vector<AccuracyCase>& cases, int min_rows_per_constant) {
  FreeSet out;
  out.rows = static_cast<int>(cases.size());
  const int min_rows = std::max(1, min_rows_per_constant);
  int fp8 = 0, p16 = 0, fp4 = 0, flash = 0;
  for (const AccuracyCase& c : cases) {
    const simulator::Precision p = c.config.plan.precision;
    fp8 += p == simulator::Precision::kFp8 ? 1 : 0;
    fp4 += p == simulator::Precision::kNvfp4 ? 1 : 0;
    p16 += p == simulator::Precision::kBf16 || p == simulator::Precision::kFp16 ? 1 : 0;
    flash += c.config.plan.flash_attention ? 1 : 0;
  }
  // 1. GEMM scales, most rows first (stable: fp8, 16-bit, fp4 on ties).
  std::vector<FreeConstant> gemms = {
      {"fp8_gemm_efficiency", fp8}, {"gemm_efficiency", p16}, {"fp4_gemm_efficiency", fp4}};
  std::stable_sort(gemms.begin(), gemms.end(),
                   [](const FreeConstant& a, const FreeConstant& b) { return a.rows > b.rows; });
  std::vector<FreeConstant> candidates = gemms;
  // 2. attention, 3. the host's launch cost.
  candidates.push_back({"flash_attention_efficiency", flash});
  candidates.push_back({"kernel_overhead_s", out.rows});
  for (const FreeConstant& c : candidates) {
    if (c.rows >= min_rows) out.eligible.push_back(c);
  }
  const size_t allowed =
      std::max<size_t>(out.eligible.empty() ? 0 : 1, static_cast<size_t>(out.rows / min_rows));
  out.free.assign(out.eligible.begin(),
                  out.eligible.begin() + static_cast<long>(std::min(allowed, out.eligible.size())));
  // Fewer rows than the rule asks for any candidate (a small fold): the
  // first candidate any row exercises, flagged underdetermined by the fit.
  if (out.free.empty()) {
    for (const FreeConstant& c : candidates) {
      if (c.rows > 0) {
        out.free.push_back(c);
        break;
      }
    }
  }
  return out;
}

int full_fit_constants(const std::vector<AccuracyCase>& cases, const CalibrationOptions& options) {
  bool p16 = false, fp8 = false, fp4 = false, pytorch = false, megatron = false;
  for (const AccuracyCase& c : cases) {
    const simulator::Precision p = c.config.plan.precision;
    p16 |= p == simulator::Precision::kBf16 || p == simulator::Precision::kFp16;
    fp8 |= p == simulator::Precision::kFp8;
    fp4 |= p == simulator::Precision::kNvfp4;
    (c.stack == "pytorch-fsdp" ? pytorch : megatron) = true;
  }
  // calibrate()'s seven Roofline constants, less gemm_efficiency without
  // 16-bit rows; the NIC pair; the per-feature factors.
  return 7 - (p16 ? 0 : 1) + (options.fit_network ? 2 : 0) +
         (options.fit_flash_attention ? 1 : 0) + (pytorch && megatron ? 1 : 0) + (fp8 ? 1 : 0) +
         (fp4 ? 1 : 0);
}

bool use_restricted_fit(const std::vector<AccuracyCase>& cases, const CalibrationOptions& options) {
  if (options.prior_reference == nullptr || cases.empty()) return false;
  return static_cast<int>(cases.size()) <
         kMinRowsPerFreeConstant * full_fit_constants(cases, options);
}

AccuracyConstants prior_constants(const simulator::GpuSpec& target,
                                  const simulator::GpuSpec& reference,
                                  const AccuracyConstants& initial) {
  AccuracyConstants k = initial;
  simulator::RooflineConstants& r = k.roofline;
  const simulator::RooflineConstants& ref = reference.roofline;
  const simulator::RooflineCeilings& rc = reference.ceilings;
  const simulator::RooflineCeilings& tc = target.ceilings;
  r.gemm_efficiency = fraction_of(ref.gemm_efficiency, rc.gemm_efficiency) * tc.gemm_efficiency;
  const double fp8_fraction = fraction_of(ref.fp8_gemm_efficiency, rc.fp8_gemm_efficiency);
  r.fp8_gemm_efficiency = fp8_fraction * tc.fp8_gemm_efficiency;
  // A reference without an FP4 peak (H100) lends its FP8 fraction.
  r.fp4_gemm_efficiency =
      (reference.peak_fp4_flops > 0 ? fraction_of(ref.fp4_gemm_efficiency, rc.fp4_gemm_efficiency)
                                    : fp8_fraction) *
      tc.fp4_gemm_efficiency;
  r.flash_attention_efficiency =
      fraction_of(ref.flash_attention_efficiency, rc.flash_attention_efficiency) *
      tc.flash_attention_efficiency;
  r.memory_efficiency =
      fraction_of(ref.memory_efficiency, rc.memory_efficiency) * tc.memory_efficiency;
  // Per-SM tensor peak over per-SM HBM bandwidth (the SM counts cancel).
  if (reference.peak_bf16_flops > 0 && reference.hbm_bytes_per_s > 0 &&
      target.hbm_bytes_per_s > 0) {
    r.gemm_dim_half = ref.gemm_dim_half * (target.peak_bf16_flops / reference.peak_bf16_flops) /
                      (target.hbm_bytes_per_s / reference.hbm_bytes_per_s);
  }
  if (reference.num_sms > 0 && target.num_sms > 0) {
    r.comm_compute_slowdown = ref.comm_compute_slowdown * reference.num_sms / target.num_sms;
  }
  r.kernel_overhead_s = ref.kernel_overhead_s;
  r.host_run_ahead_s = ref.host_run_ahead_s;
  r.microbatch_overhead_s = ref.microbatch_overhead_s;
  r.iteration_overhead_s = ref.iteration_overhead_s;
  r.pytorch_fsdp_efficiency = ref.pytorch_fsdp_efficiency;
  return k;
}

Result<FreeBounds> free_constant_bounds(const std::string& name, const simulator::GpuSpec& gpu) {
  if (is_gemm_scale(name)) {
    const double ceiling = ceiling_of(name, gpu.ceilings);
    return FreeBounds{std::min(1.0, 0.3 / ceiling), 1.0};
  }
  if (name == "flash_attention_efficiency") {
    const double ceiling = std::min(1.0, gpu.ceilings.flash_attention_efficiency);
    return FreeBounds{std::min(0.2, ceiling), ceiling};
  }
  if (name == "kernel_overhead_s") return FreeBounds{0.0, kKernelOverheadMaxS};
  return Status::invalid_argument("restricted fit: no constant " + name);
}

AccuracyConstants restricted_constants(const AccuracyConstants& prior,
                                       const simulator::GpuSpec& gpu,
                                       const std::vector<FreeConstant>& free,
                                       const std::vector<double>& values) {
  AccuracyConstants k = prior;
  simulator::RooflineConstants& r = k.roofline;
  double first_scale = -1;
  for (size_t i = 0; i < free.size(); ++i) {
    const std::string& n = free[i].name;
    // Forward differences may step just past a bound.
    if (is_gemm_scale(n)) {
      const double scale = std::clamp(values[i], 1e-3, 1.0);
      *gemm_field(n, &r) = scale * ceiling_of(n, gpu.ceilings);
      if (first_scale < 0) first_scale = scale;
    } else if (n == "flash_attention_efficiency") {
      r.flash_attention_efficiency = std::clamp(values[i], 1e-3, 1.0);
    } else if (n == "kernel_overhead_s") {
      r.kernel_overhead_s = std::max(0.0, values[i]);
    }
  }
  if (first_scale >= 0) {
    for (const char* g : {"gemm_efficiency", "fp8_gemm_efficiency", "fp4_gemm_efficiency"}) {
      const bool is_free = std::any_of(free.begin(), free.end(),
                                       [&](const FreeConstant& f) { return f.name == g; });
      if (!is_free) *gemm_field(g, &r) = first_scale * ceiling_of(g, gpu.ceilings);
    }
  }
  return k;
}

namespace {

// The pooled rows must all be of one GPU other than the cases'.
Status check_pool(const simulator::GpuSpec& gpu, const std::vector<AccuracyCase>& pool) {
  for (const AccuracyCase& c : pool) {
    if (c.config.cluster.gpu.name != pool.front().config.cluster.gpu.name ||
        c.config.cluster.gpu.name == gpu.name) {
      return Status::invalid_argument("calibrate: the pooled rows must be of one other GPU (" +
                                      c.name + ")");
    }
  }
  return Status();
}

// Parameters: one per free constant (the cases' GPU), then the pool GPU's
// own GEMM scales; the pool shares the others. Sets each group's GPU,
// prior and parameter indices; returns the parameters' bounds.
Result<std::vector<FreeBounds>> fit_groups(const std::vector<AccuracyCase>& cases,
                                           const std::vector<AccuracyCase>& pool,
                                           const FreeSet& set, const AccuracyConstants& prior,
                                           const CalibrationOptions& options,
                                           std::vector<FitGroup>* fit_groups) {
  std::vector<FitGroup>& groups = *fit_groups;
  const simulator::GpuSpec& gpu = cases.front().config.cluster.gpu;
  std::vector<FreeBounds> bounds;
  groups.resize(pool.empty() ? 1 : 2);
  groups[0].cases = &cases;
  groups[0].gpu = &gpu;
  groups[0].prior = prior;
  for (const FreeConstant& f : set.free) {
    LLMPLAN_ASSIGN_OR_RETURN(const FreeBounds b, free_constant_bounds(f.name, gpu));
    groups[0].index.push_back(static_cast<int>(bounds.size()));
    bounds.push_back(b);
  }
  if (!pool.empty()) {
    const simulator::GpuSpec& pool_gpu = pool.front().config.cluster.gpu;
    groups[1].cases = &pool;
    groups[1].gpu = &pool_gpu;
    groups[1].prior = prior_constants(pool_gpu, *options.prior_reference, constants_of(pool.front()));
    for (size_t i = 0; i < set.free.size(); ++i) {
      LLMPLAN_ASSIGN_OR_RETURN(const FreeBounds b, free_constant_bounds(set.free[i].name, pool_gpu));
      if (is_gemm_scale(set.free[i].name)) {
        groups[1].index.push_back(static_cast<int>(bounds.size()));
        bounds.push_back(b);
      } else {
        // Shared: inside both GPUs' bounds.
        groups[1].index.push_back(static_cast<int>(i));
        bounds[i].lo = std::max(bounds[i].lo, b.lo);
        bounds[i].hi = std::min(bounds[i].hi, b.hi);
      }
    }
  }
  return bounds;
}

// The first line of the fit's summary: rows, pool, free set, prior.
std::string restricted_header(const std::vector<AccuracyCase>& cases,
                              const std::vector<AccuracyCase>& pool, const FreeSet& set,
                              const CalibrationOptions& options) {
  std::string names;
  for (const FreeConstant& f : set.free) {
    names += (names.empty() ? "" : ", ") + f.name + " (" + std::to_string(f.rows) + " rows)";
  }
  return "restricted dense fit: " + std::to_string(cases.size()) + " rows" +
         (pool.empty() ? std::string()
                       : " pooled with " + std::to_string(pool.size()) + " rows of " +
                             pool.front().config.cluster.gpu.name +
                             " (own GEMM scales, shared attention and host costs)") +
         ", at least " + std::to_string(kMinRowsPerFreeConstant) + " per free constant: free " +
         names + "; held at " + options.prior_reference->name +
         "'s calibration scaled by datasheet ratios (planner/accuracy/restricted_fit.h)\n";
}

// The screened points and their costs; `start` the cheapest.
struct RestrictedScreen {
  std::vector<std::vector<double>> grid;
  std::vector<double> screen;
  size_t start = 0;
};

// Screen: 3 points per parameter, inside its bounds (at 1/6, 1/2, 5/6).
Result<RestrictedScreen> screen_restricted(const std::vector<FitGroup>& groups, const FreeSet& set,
                                           const std::vector<FreeBounds>& bounds,
                                           const CalibrationOptions& options) {
  const auto total_cost = [&](const double* x) -> Result<double> {
    double cost = 0;
    for (const FitGroup& g : groups) {
      LLMPLAN_ASSIGN_OR_RETURN(
          const double c,
          robust_cost(*g.cases, restricted_constants(g.prior, *g.gpu, set.free, g.values(x))));
      cost += c;
    }
    return cost;
  };
  RestrictedScreen sc;
  std::vector<std::vector<double>>& grid = sc.grid;
  std::vector<double>& screen = sc.screen;
  const size_t n = bounds.size();
  grid.resize(1);
  for (size_t i = 0; i < n; ++i) {
    std::vector<std::vector<double>> next;
    for (const std::vector<double>& g : grid) {
      for (double t : {1.0 / 6, 0.5, 5.0 / 6}) {
        std::vector<double> p = g;
        p.push_back(bounds[i].lo + t * (bounds[i].hi - bounds[i].lo));
        next.push_back(p);
      }
    }
    grid = std::move(next);
  }
  screen.resize(grid.size());
  for (size_t g = 0; g < grid.size(); ++g) {
    LLMPLAN_ASSIGN_OR_RETURN(screen[g], total_cost(grid[g].data()));
    if (options.on_progress) {
      options.on_progress({CalibrationProgress::Stage::kScreen, static_cast<int>(g) + 1,
                           static_cast<int>(grid.size()), 0,
                           *std::min_element(screen.begin(), screen.begin() + g + 1)});
    }
  }
  sc.start = static_cast<size_t>(
      std::min_element(screen.begin(), screen.end()) - screen.begin());
  return sc;
}

// The Ceres polish from the screen's best point: its parameters in *x,
// its summary returned.
ceres::Solver::Summary polish_restricted(const std::vector<FitGroup>& groups, const FreeSet& set,
                                         const std::vector<FreeBounds>& bounds,
                                         const CalibrationOptions& options,
                                         const RestrictedScreen& sc, double* x) {
  const size_t n = bounds.size();
  for (size_t i = 0; i < n; ++i) x[i] = sc.grid[sc.start][i];
  ceres::Problem problem;
  ceres::NumericDiffOptions diff;
  diff.relative_step_size = 1e-3;
  for (const FitGroup& g : groups) {
    for (const AccuracyCase& c : *g.cases) {
      auto* cost =
          new ceres::NumericDiffCostFunction<RestrictedResidual, ceres::CENTRAL, 1, kMaxParams>(
              new RestrictedResidual{&c, &g, &set.free}, ceres::TAKE_OWNERSHIP, 1, diff);
      problem.AddResidualBlock(cost, new ceres::HuberLoss(kHuberDelta), x);
    }
  }
  std::vector<int> unused;
  for (int i = 0; i < kMaxParams; ++i) {
    if (static_cast<size_t>(i) < n) {
      problem.SetParameterLowerBound(x, i, bounds[i].lo);
      problem.SetParameterUpperBound(x, i, bounds[i].hi);
    } else {
      unused.push_back(i);
    }
  }
  if (!unused.empty()) problem.SetManifold(x, new ceres::SubsetManifold(kMaxParams, unused));
  ceres::Solver::Options solver =
      polish_solver_options(options, std::min(options.max_iterations, 200));
  ceres::Solver::Summary summary;
  ceres::Solve(solver, &problem, &summary);
  return summary;
}

// The pooled fit's line: each free GEMM scale on both GPUs.
std::string pooled_scales(const FreeSet& set, const std::vector<double>& values,
                          const std::vector<double>& params, const simulator::GpuSpec& gpu,
                          const FitGroup& pool_group) {
  std::string pooled;
  for (size_t i = 0; i < set.free.size(); ++i) {
    if (!is_gemm_scale(set.free[i].name)) continue;
    pooled += (pooled.empty() ? "" : ", ") + set.free[i].name + " scale " +
              fmt("%.4g", values[i]) + " (" + gpu.name + "), " +
              fmt("%.4g", params[static_cast<size_t>(pool_group.index[i])]) + " (" +
              pool_group.gpu->name + ")";
  }
  return "pooled fit, per-GPU GEMM scales: " + pooled + "\n";
}

}  // namespace

Result<CalibrationResult> calibrate_restricted(const std::vector<AccuracyCase>& cases,
                                               const AccuracyConstants& initial,
                                               const CalibrationOptions& options) {
  if (cases.empty()) return Status::invalid_argument("calibrate: no measured runs");
  if (options.prior_reference == nullptr) {
    return Status::invalid_argument("calibrate: the restricted fit needs a reference GPU");
  }
  const simulator::GpuSpec& gpu = cases.front().config.cluster.gpu;
  const std::vector<AccuracyCase> no_pool;
  const std::vector<AccuracyCase>& pool = options.pool ? *options.pool : no_pool;
  LLMPLAN_RETURN_IF_ERROR(check_pool(gpu, pool));
  // The free set of a pooled fit counts both GPUs' rows.
  std::vector<AccuracyCase> counted = cases;
  counted.insert(counted.end(), pool.begin(), pool.end());
  const FreeSet set = select_free_constants(counted);
  if (set.free.empty()) {
    return Status::failed_precondition("calibrate: no constant of the restricted fit is "
                                       "exercised by " + std::to_string(kMinRowsPerFreeConstant) +
                                       " or more of the " + std::to_string(counted.size()) +
                                       " rows");
  }
  const AccuracyConstants prior = prior_constants(gpu, *options.prior_reference, initial);
  const bool underdetermined = set.eligible.empty();
  std::vector<FitGroup> groups;
  LLMPLAN_ASSIGN_OR_RETURN(const std::vector<FreeBounds> bounds,
                           fit_groups(cases, pool, set, prior, options, &groups));
  CalibrationResult best;
  const auto add_line = [&](const std::string& text) {
    best.summary += text;
    if (options.on_line) options.on_line(text);
  };
  add_line(restricted_header(cases, pool, set, options));
  LLMPLAN_ASSIGN_OR_RETURN(const RestrictedScreen sc,
                           screen_restricted(groups, set, bounds, options));
  const size_t n = bounds.size();
  const size_t start = sc.start;
  const std::vector<double>& screen = sc.screen;
  double x[kMaxParams] = {0, 0, 0, 0, 0, 0, 0, 0};
  const ceres::Solver::Summary summary = polish_restricted(groups, set, bounds, options, sc, x);
  const double polished =
      summary.IsSolutionUsable() ? summary.final_cost : std::numeric_limits<double>::infinity();
  const std::vector<double> params = polished <= screen[start]
                                         ? std::vector<double>(x, x + n)
                                         : sc.grid[start];
  const std::vector<double> values = groups[0].values(params.data());
  best.cost = std::min(polished, screen[start]);
  best.starts = 1;
  best.constants = restricted_constants(prior, gpu, set.free, values);
  add_line("screened " + std::to_string(sc.grid.size()) + " points: best cost " +
           fmt("%.6g", screen[start]) + "; polished: cost " + fmt("%.6g", best.cost) + " after " +
           std::to_string(summary.iterations.size()) + " iterations (" +
           (summary.IsSolutionUsable() ? "usable" : "failed") + ")\n");
  if (!pool.empty()) add_line(pooled_scales(set, values, params, gpu, groups[1]));
  for (size_t i = 0; i < set.free.size(); ++i) {
    const double span = bounds[i].hi - bounds[i].lo;
    if (values[i] <= bounds[i].lo + 1e-6 * span) {
      best.at_bound.push_back(set.free[i].name + " at its lower bound");
    } else if (values[i] >= bounds[i].hi - 1e-6 * span) {
      best.at_bound.push_back(set.free[i].name + " at its upper bound");
    }
  }
  for (const std::string& b : best.at_bound) add_line("note: " + b + "\n");
  if (underdetermined) {
    add_line("warning: " + std::to_string(cases.size()) + " rows, fewer than " +
             std::to_string(kMinRowsPerFreeConstant) +
             " for any constant: the fit is underdetermined and its MAPE means nothing\n");
  }
  LLMPLAN_ASSIGN_OR_RETURN(best.in_sample_mape, in_sample_mape(cases, best.constants));
  return best;
}

}  // namespace llmplan::planner

#include "planner/search/reliability.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace llmplan::planner {
namespace {

constexpr double kSecondsPerDay = 86400.0;
// Returned for a plan that (practically) never finishes: finite, so that
// reports stay valid JSON, and far beyond any deadline (training_days' value).
constexpr double kNever = 1e300;

double units(const JobSize& j, CauseScope s) {
  switch (s) {
    case CauseScope::kGpu: return j.gpus;
    case CauseScope::kNode: return j.nodes;
    case CauseScope::kSwitch: return j.switches;
  }
  return 0;
}

// P(N >= s) for N ~ Poisson(mu).
double poisson_tail(double mu, int s) {
  if (s <= 0) return 1.0;
  double term = std::exp(-mu), below = 0;
  for (int k = 0; k < s; ++k) {
    below += term;
    term *= mu / (k + 1);
  }
  return std::clamp(1.0 - below, 0.0, 1.0);
}

// What one plan's checkpoint costs: sizes and times.
struct CheckpointCost {
  double bytes = 0, bytes_per_writer = 0, write_s = 0, exposed_s = 0, load_s = 0;
};

CheckpointCost checkpoint_cost(const simulator::Model& model, const simulator::Plan& plan,
                               const simulator::Cluster& cluster, const CheckpointSettings& c,
                               int gpus_used) {
  CheckpointCost k;
  k.bytes = static_cast<double>(model.parameter_count()) * c.bytes_per_param;
  // With a sharded optimizer every rank writes its own shard (and a share of
  // the weights: Megatron's fully parallel save); otherwise one data-parallel
  // replica (its t x p x ... ranks) writes everything.
  const int replicas = std::max(1, plan.grad_reduce_ranks());
  const double writers =
      plan.sharding_stage() >= 1 ? gpus_used : std::max(1.0, static_cast<double>(gpus_used) / replicas);
  k.bytes_per_writer = k.bytes / writers;
  // One node carries the traffic of its writers (at most a node's GPUs).
  const double writers_per_node =
      std::min<double>(cluster.gpus_per_node,
                       plan.sharding_stage() >= 1 ? cluster.gpus_per_node : plan.tensor_parallel);
  const double node_s = k.bytes_per_writer * writers_per_node / c.node_bytes_per_s;
  k.write_s = std::max(k.bytes / c.write_bytes_per_s, node_s);
  k.load_s = std::max(k.bytes / c.read_bytes_per_s, node_s);
  k.exposed_s = c.async ? k.bytes_per_writer / c.host_copy_bytes_per_s : k.write_s;
  return k;
}

// The restart time of a cause (hardware or not) and the spare shortfall.
struct RestartCost {
  double hardware_s = 0, software_s = 0, shortfall = 0;
};

RestartCost restart_cost(const Reliability& rel, const JobSize& j, double load_s) {
  const CheckpointSettings& c = rel.checkpoint;
  // Node-taking faults of the job per second (hardware causes, in nodes).
  double hw_rate = 0;
  for (const InterruptionCause& cause : rel.causes) {
    if (cause.hardware) hw_rate += cause.per_unit_day * units(j, cause.scope) / kSecondsPerDay;
  }
  RestartCost r;
  r.shortfall = poisson_tail(hw_rate * c.node_repair_s, c.spare_nodes);
  const double reschedule_s = c.spare_swap_s + r.shortfall * (c.reschedule_s - c.spare_swap_s);
  r.software_s = c.detection_s + c.init_base_s + c.init_per_gpu_s * j.gpus + load_s + c.warmup_s;
  r.hardware_s = r.software_s + (c.spare_nodes > 0 ? reschedule_s : c.reschedule_s);
  return r;
}

// splitmix64: a counter-based generator (each trial seeds its own state).
uint64_t splitmix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Uniform in (0, 1).
double uniform(uint64_t* state) {
  return (static_cast<double>(splitmix64(state) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

// The standard normal quantile (bisection on erfc; used twice per report).
double normal_quantile(double p) {
  double lo = -40, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p) lo = mid; else hi = mid;
  }
  return 0.5 * (lo + hi);
}

double quantile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double at = p * static_cast<double>(sorted.size() - 1);
  const size_t i = static_cast<size_t>(std::floor(at));
  const size_t j = std::min(i + 1, sorted.size() - 1);
  return sorted[i] + (at - static_cast<double>(i)) * (sorted[j] - sorted[i]);
}

// The wall-time model's constants of a breakdown's rate, delta and E[R].
FailureCosts goodput_failure_costs(const Goodput& g) {
  FailureCosts f;
  f.enabled = true;
  f.rate_per_s = g.rate_per_s;
  f.delta_s = g.checkpoint_exposed_s;
  f.mean_restart_s = g.mean_restart_s;
  f.tau_opt_s = optimal_interval_s(f.rate_per_s, f.delta_s);
  return f;
}

}  // namespace

JobSize job_size(int gpus_used, const simulator::Cluster& cluster, int gpus_per_switch) {
  JobSize j;
  j.gpus = gpus_used;
  j.nodes = std::ceil(static_cast<double>(gpus_used) / std::max(1, cluster.gpus_per_node));
  j.switches = std::ceil(static_cast<double>(gpus_used) / std::max(1, gpus_per_switch));
  return j;
}

double young_daly_interval_s(double delta_s, double mtbi_s) { return std::sqrt(2.0 * delta_s * mtbi_s); }

double optimal_interval_s(double rate_per_s, double delta_s) {
  if (!(rate_per_s > 0)) return std::numeric_limits<double>::infinity();
  // d/dtau [expm1(lambda (tau + delta)) / tau] = 0  <=>  (1 - x) e^(x + a) = 1,
  // x = lambda tau, a = lambda delta; in logs h(x) = ln(1 - x) + x + a,
  // decreasing from a > 0 at x = 0 to -inf at x = 1.
  const double a = rate_per_s * delta_s;
  double lo = 0, hi = 1;
  // Bisection to the last bit (stops once the midpoint is an end: at most
  // about 1,100 halvings, typically 60-80).
  for (;;) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    if (std::log1p(-mid) + mid + a > 0) lo = mid; else hi = mid;
  }
  return 0.5 * (lo + hi) / rate_per_s;
}

double expected_segment_s(double rate_per_s, double mean_restart_s, double segment_s) {
  if (!(rate_per_s > 0)) return segment_s;
  return (1.0 / rate_per_s + mean_restart_s) * std::expm1(rate_per_s * segment_s);
}

FailureCosts failure_costs(const simulator::Model& model, const simulator::Plan& plan,
                           const simulator::Cluster& cluster, const Reliability& rel) {
  if (!rel.enabled) return FailureCosts{};
  return goodput_failure_costs(goodput(model, plan, cluster, rel, 0));
}

double expected_wall_s(const FailureCosts& f, double compute_s, double* checkpoints) {
  if (checkpoints != nullptr) *checkpoints = 0;
  if (!f.enabled) return compute_s;
  if (!(compute_s > 0)) return 0;
  if (!std::isfinite(compute_s) || compute_s >= kNever) return kNever;
  // The integer optimum lies next to W / tau* (E(tau + delta) / tau is
  // unimodal in tau), so it is the better of the two neighbours.
  const double x = compute_s / f.tau_opt_s;  // inf when the rate is 0: one segment
  const double n1 = std::isfinite(x) ? std::max(1.0, std::floor(x)) : 1.0;
  const double n2 = std::isfinite(x) ? std::max(1.0, std::ceil(x)) : 1.0;
  auto cost = [&](double n) {
    return n * expected_segment_s(f.rate_per_s, f.mean_restart_s, compute_s / n + f.delta_s);
  };
  const double c1 = cost(n1), c2 = cost(n2);
  const double best = c2 < c1 ? c2 : c1;
  if (checkpoints != nullptr) *checkpoints = c2 < c1 ? n2 : n1;
  return std::isfinite(best) ? std::min(best, kNever) : kNever;
}

double compute_s_within(const FailureCosts& f, double wall_s) {
  if (!f.enabled) return wall_s;
  double lo = 0, hi = wall_s;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;  // converged to the last bit
    if (expected_wall_s(f, mid) <= wall_s) lo = mid; else hi = mid;
  }
  return lo;
}

Goodput goodput(const simulator::Model& model, const simulator::Plan& plan,
                const simulator::Cluster& cluster, const Reliability& rel, double compute_s) {
  Goodput g;
  g.compute_s = compute_s;
  g.wall_s = compute_s;
  if (!rel.enabled) return g;
  g.enabled = true;
  const int gpus_used = plan.world_size();
  const JobSize j = job_size(gpus_used, cluster, rel.gpus_per_switch);
  const CheckpointCost k = checkpoint_cost(model, plan, cluster, rel.checkpoint, gpus_used);
  g.checkpoint_bytes = k.bytes;
  g.checkpoint_bytes_per_gpu = k.bytes_per_writer;
  g.checkpoint_write_s = k.write_s;
  g.checkpoint_exposed_s = k.exposed_s;
  g.checkpoint_load_s = k.load_s;
  const RestartCost r = restart_cost(rel, j, k.load_s);
  g.spare_shortfall = rel.checkpoint.spare_nodes > 0 ? r.shortfall : 1.0;
  g.spare_gpus = rel.checkpoint.spare_nodes * cluster.gpus_per_node;
  double weighted_restart = 0;
  for (const InterruptionCause& c : rel.causes) {
    CauseCost cc;
    cc.name = c.name;
    cc.rate_per_s = c.per_unit_day * units(j, c.scope) / kSecondsPerDay;
    cc.restart_s = c.hardware ? r.hardware_s : r.software_s;
    g.rate_per_s += cc.rate_per_s;
    weighted_restart += cc.rate_per_s * cc.restart_s;
    g.causes.push_back(cc);
  }
  g.mean_restart_s = g.rate_per_s > 0 ? weighted_restart / g.rate_per_s : r.software_s;
  g.mtbi_s = g.rate_per_s > 0 ? 1.0 / g.rate_per_s : 0;
  g.young_daly_interval_s =
      g.rate_per_s > 0 ? young_daly_interval_s(g.checkpoint_exposed_s, g.mtbi_s) : 0;
  if (!(compute_s > 0)) return g;
  const FailureCosts f = goodput_failure_costs(g);
  g.wall_s = expected_wall_s(f, compute_s, &g.checkpoints);
  g.goodput = g.wall_s > 0 ? compute_s / g.wall_s : 1.0;
  if (!(g.checkpoints > 0) || g.wall_s >= kNever) return g;
  g.interval_s = compute_s / g.checkpoints;
  g.checkpoint_overhead_s = g.checkpoints * g.checkpoint_exposed_s;
  const double segment_s = g.interval_s + g.checkpoint_exposed_s;
  const double lt = g.rate_per_s * segment_s;
  g.interruptions = g.rate_per_s > 0 ? g.checkpoints * std::expm1(lt) : 0;
  // Expected progress lost per interruption: E[X | X < T], X ~ Exp(lambda).
  const double rework_s = g.rate_per_s > 0 ? 1.0 / g.rate_per_s - segment_s / std::expm1(lt) : 0;
  for (CauseCost& cc : g.causes) {
    cc.interruptions = g.rate_per_s > 0 ? g.interruptions * cc.rate_per_s / g.rate_per_s : 0;
    cc.lost_s = cc.interruptions * (rework_s + cc.restart_s);
  }
  return g;
}

WallDistribution monte_carlo(const Goodput& g, const BandRatios& band, int trials, uint64_t seed) {
  WallDistribution d;
  d.seed = seed;
  if (!g.enabled || !(g.compute_s > 0) || g.wall_s >= kNever || trials <= 0) return d;
  // Too many interruptions to draw one by one: no distribution.
  if (g.interruptions * (band.known ? band.high_ratio : 1.0) > 1e6) return d;
  double mu = 0, sigma = 0;
  if (band.known && band.low_ratio > 0 && band.high_ratio > band.low_ratio) {
    const double z_low = normal_quantile(band.p_low), z_high = normal_quantile(band.p_high);
    sigma = (std::log(band.high_ratio) - std::log(band.low_ratio)) / (z_high - z_low);
    mu = std::log(band.low_ratio) - sigma * z_low;
  }
  const FailureCosts f = goodput_failure_costs(g);
  std::vector<double> cumulative;
  double acc = 0;
  for (const CauseCost& c : g.causes) cumulative.push_back(acc += c.rate_per_s);
  std::vector<double> walls(trials);
  double sum = 0, sum_sq = 0, interruptions = 0;
  for (int t = 0; t < trials; ++t) {
    uint64_t state = seed ^ (static_cast<uint64_t>(t) * 0xD1B54A32D192ED03ULL);
    double ratio = 1.0;
    if (sigma > 0 || mu != 0) {
      const double u1 = uniform(&state), u2 = uniform(&state);
      const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
      ratio = std::exp(mu + sigma * z);
    }
    const double work_s = g.compute_s * ratio;
    double n = 0;
    expected_wall_s(f, work_s, &n);
    const double segment_s = work_s / n + f.delta_s;
    double left = n, wall = 0;
    while (left > 0) {
      const double fail_at = f.rate_per_s > 0 ? -std::log(uniform(&state)) / f.rate_per_s
                                              : std::numeric_limits<double>::infinity();
      const double done = std::floor(fail_at / segment_s);
      if (done >= left) {
        wall += left * segment_s;
        break;
      }
      wall += fail_at;  // done whole segments, then the lost part of the next
      left -= done;
      const double pick = uniform(&state) * acc;
      size_t c = 0;
      while (c + 1 < cumulative.size() && cumulative[c] < pick) ++c;
      wall += g.causes[c].restart_s;
      interruptions += 1;
    }
    walls[t] = wall;
    sum += wall;
    sum_sq += wall * wall;
  }
  d.trials = trials;
  d.mean_s = sum / trials;
  const double var = std::max(0.0, sum_sq / trials - d.mean_s * d.mean_s) * trials /
                     std::max(1, trials - 1);
  d.stderr_s = std::sqrt(var / trials);
  d.mean_interruptions = interruptions / trials;
  std::sort(walls.begin(), walls.end());
  d.p10_s = quantile(walls, 0.1);
  d.p50_s = quantile(walls, 0.5);
  d.p90_s = quantile(walls, 0.9);
  return d;
}

}  // namespace llmplan::planner

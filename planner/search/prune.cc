#include "planner/search/prune.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "planner/search/search.h"
#include "simulator/lowering.h"
#include "simulator/schedule.h"

namespace llmplan::planner {

using simulator::Precision;

namespace {
// The bounds sum the simulator's own durations in another order (and the
// lowered bound can equal the simulated time: p = 1, nothing exposed), so
// they are lowered by a relative 1e-9, far above double rounding (1e-16
// per operation), that a plan tying its shape's best is never pruned.
constexpr double kBoundRoundingSlack = 1.0 - 1e-9;
}  // namespace

double best_compute_rate_flops_per_s(const simulator::Plan& plan, const simulator::GpuSpec& gpu) {
  const simulator::RooflineConstants& k = gpu.roofline;
  // 16-bit kernels: GEMMs and flash attention (bf16 or fp16 peak).
  const double peak16 = std::max(gpu.peak_bf16_flops, gpu.peak_fp16_flops);
  double rate = peak16 * std::max(k.gemm_efficiency, k.flash_attention_efficiency);
  if (simulator::low_precision(plan.precision)) {
    // FP8 (and NVFP4) plans: their linear layers may run in either low
    // precision; counting both keeps the bound a bound.
    rate = std::max(rate, gpu.peak_fp8_flops * k.fp8_gemm_efficiency);
    rate = std::max(rate, gpu.peak_fp4_flops * k.fp4_gemm_efficiency);
  }
  return rate;
}

double iteration_time_lower_bound_s(const simulator::Model& model, const simulator::Plan& plan,
                                    const simulator::Cluster& cluster) {
  const double rate = best_compute_rate_flops_per_s(plan, cluster.gpu);
  const double world = static_cast<double>(plan.world_size());
  if (!(rate > 0) || !(world > 0)) return 0.0;
  const double flops = model.model_flops_per_step(plan.global_batch_size);
  double compute_s = flops / (world * rate);
  const int p = plan.pipeline_parallel, m = plan.num_micro_batches();
  const bool full_backward = plan.schedule == simulator::Schedule::kOneFOneB ||
                             plan.schedule == simulator::Schedule::kGpipe;
  if (p > 1 && m >= 1 && plan.virtual_stages == 1 && full_backward) {
    // The pipeline factor (p / m) / (1 - (1 - 1/m)^p) >= 1 (see prune.h),
    // with expm1 and log1p so it stays accurate for large m.
    const double mm = static_cast<double>(m);
    const double filled = -std::expm1(p * std::log1p(-1.0 / mm));
    if (filled > 0) compute_s *= std::max(1.0, (p / mm) / filled);
  }
  const double overhead_s = std::max(0.0, cluster.gpu.roofline.iteration_overhead_s);
  return (std::max(0.0, compute_s) + overhead_s) * kBoundRoundingSlack;
}

namespace {
// The number of W steps stage r of a zb-h1 plan runs after its last B step
// (schedule.h's order, read from zb_h1_step from the end: at most the lag L
// <= p - 1 pending W's and one more).
int weight_steps_after_last_input(int p, int m, int r) {
  int k = 0;
  for (int step = 3 * m - 1; step >= 0; --step) {
    const simulator::PipelineStep s = simulator::zb_h1_step(p, m, r, step);
    if (s.forward || s.backward != simulator::BackwardKind::kWeight) break;
    ++k;
  }
  return k;
}
}  // namespace

LoweredBound lowered_bound(const simulator::Model& model, const simulator::Plan& plan,
                           const simulator::Cluster& cluster, const simulator::CostModel& cost) {
  LoweredBound out;
  if (!simulator::validate(model, plan).ok()) return out;
  const int p = plan.pipeline_parallel, v = plan.virtual_stages;
  const int chunks = p * v;
  const double m = plan.num_micro_batches();
  const simulator::Placement placement = simulator::place(plan, cluster);
  std::vector<simulator::ChunkProgram> unique;
  const std::vector<const simulator::ChunkProgram*> programs =
      simulator::lower_plan_chunks(model, plan, placement, cost, &unique);
  // A chunk's backward on the pipeline's chain (B, or the full backward) and
  // its deferrable W pass.
  auto input_s = [](const simulator::ChunkProgram& c) {
    return c.split_backward ? c.backward_input_s : c.backward_s;
  };
  auto weight_s = [](const simulator::ChunkProgram& c) {
    return c.split_backward ? c.backward_weight_s : 0.0;
  };
  const bool zb = plan.schedule == simulator::Schedule::kZbH1;
  double fill_s = 0;   // fill_r
  double drain_s = 0;  // D_r
  double busiest_s = 0, pipeline_s = 0;
  for (int r = 0; r < p; ++r) {
    const simulator::ChunkProgram& first = *programs[r];
    if (r > 0) {
      // Chunk r - 1 (stage r - 1): its forward and the activation it sends
      // to chunk r; the gradient chunk r sends back, then chunk r - 1's B.
      const simulator::ChunkProgram& prev = *programs[r - 1];
      fill_s += prev.forward_s + simulator::pipeline_transfer_s(prev, placement, cost, r - 1);
      drain_s += simulator::pipeline_transfer_s(first, placement, cost, r - 1) + input_s(prev);
    }
    double forward_input_s = 0, weights_s = 0;  // per micro-batch, the stage's chunks
    for (int j = r; j < chunks; j += p) {
      forward_input_s += programs[j]->forward_s + input_s(*programs[j]);
      weights_s += weight_s(*programs[j]);
    }
    // zb-h1 (v = 1): the W's after the last B, which the chain does not wait for.
    const double after_s =
        zb ? weight_steps_after_last_input(p, plan.num_micro_batches(), r) * weight_s(first) : 0.0;
    drain_s = std::max(drain_s, after_s);
    const double busy_s = m * forward_input_s + m * weights_s;
    busiest_s = std::max(busiest_s, busy_s);
    pipeline_s = std::max(pipeline_s, fill_s + (busy_s - after_s) + drain_s);
  }
  if (!(busiest_s > 0) || !std::isfinite(pipeline_s)) return out;
  const double overhead_s = std::max(0.0, cost.iteration_overhead_s());
  out.busiest_stage_s = (busiest_s + overhead_s) * kBoundRoundingSlack;
  out.pipeline_s = (std::max(busiest_s, pipeline_s) + overhead_s) * kBoundRoundingSlack;
  return out;
}

double stage_lower_bound_s(const simulator::Model& model, const simulator::Plan& plan,
                           const simulator::Cluster& cluster, const simulator::CostModel& cost,
                           simulator::LoweringCache* cache) {
  if (!simulator::validate(model, plan).ok()) return 0.0;
  const int p = plan.pipeline_parallel, v = plan.virtual_stages;
  const int chunks = p * v;
  const int j = chunks >= 3 ? 1 : chunks - 1;
  const simulator::Placement placement = simulator::place(plan, cluster);
  // Every chunk the stage holding chunk j runs (interleaved: its v chunks
  // j % p, j % p + p, ...; one otherwise), summed.
  double pass_s = 0;
  for (int c = j % p; c < chunks; c += p) {
    const simulator::ChunkPassTimes prog =
        simulator::chunk_pass_times(cache, model, plan, placement, cost, c);
    const double backward_s =
        prog.split_backward ? prog.backward_input_s + prog.backward_weight_s : prog.backward_s;
    pass_s += prog.forward_s + backward_s;
  }
  if (!(pass_s > 0) || !std::isfinite(pass_s)) return 0.0;
  return (plan.num_micro_batches() * pass_s + std::max(0.0, cost.iteration_overhead_s())) *
         kBoundRoundingSlack;
}

double lowered_lower_bound_s(const simulator::Model& model, const simulator::Plan& plan,
                             const simulator::Cluster& cluster,
                             const simulator::CostModel& roofline) {
  return lowered_bound(model, plan, cluster, roofline).pipeline_s;
}

std::string pruning_unsafe_reason(const SearchOptions& options) {
  if (options.exhaustive) return "--exhaustive";
  if (options.cost_model) return "a measured cost model (--profile / --allreduce-lut) has no proven ceiling";
  if (options.objective != Objective::kLargest && options.objective != Objective::kLoss) {
    return "the objective's score is not proven monotone in tokens per second";
  }
  return "";
}

}  // namespace llmplan::planner

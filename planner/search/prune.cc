#include "planner/search/prune.h"

#include <algorithm>
#include <cmath>

#include "planner/search/search.h"
#include "simulator/lowering.h"

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
  const double compute_s = flops / (world * rate);
  const double overhead_s = std::max(0.0, cluster.gpu.roofline.iteration_overhead_s);
  return (std::max(0.0, compute_s) + overhead_s) * kBoundRoundingSlack;
}

double lowered_lower_bound_s(const simulator::Model& model, const simulator::Plan& plan,
                             const simulator::Cluster& cluster,
                             const simulator::CostModel& roofline,
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
        simulator::chunk_pass_times(cache, model, plan, placement, roofline, c);
    const double backward_s =
        prog.split_backward ? prog.backward_input_s + prog.backward_weight_s : prog.backward_s;
    pass_s += prog.forward_s + backward_s;
  }
  if (!(pass_s > 0) || !std::isfinite(pass_s)) return 0.0;
  return (plan.num_micro_batches() * pass_s + std::max(0.0, roofline.iteration_overhead_s())) *
         kBoundRoundingSlack;
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

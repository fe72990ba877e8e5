#include "simulator/simulate.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>

#include "simulator/engine.h"
#include "simulator/lowering.h"
#include "simulator/roofline.h"
#include "simulator/simulate_internal.h"

namespace llmplan::simulator {
namespace {

using simulate_internal::GraphBuilder;
using simulate_internal::Workspace;

// Buffers above this many tasks (task-level or huge simulations) are freed
// after use instead of being kept.
constexpr size_t kKeptWorkspaceTasks = size_t{1} << 18;

// The workspace of this thread (Workspace: reused by its next simulation).
Workspace& thread_workspace() {
  thread_local Workspace workspace;
  return workspace;
}

// A cost model fed absurd numbers (a profile or constants file) can give
// durations that are not finite: name the first such kernel.
Status check_durations(const std::vector<ChunkProgram>& unique, const CostModel& cost) {
  for (const ChunkProgram& prog : unique) {
    for (const auto* ops :
         {&prog.forward, &prog.backward, &prog.backward_input, &prog.backward_weight}) {
      for (const LoweredOp& op : *ops) {
        if (op.duration_s >= 0 && std::isfinite(op.duration_s)) continue;
        return Status::invalid_argument(
            "simulate: the cost model (" + cost.describe() + ") gave a duration of " +
            std::to_string(op.duration_s) + " s for " + op.name + " (" +
            (ops == &prog.forward ? "forward" : "backward") + ", pipeline chunk " +
            std::to_string(prog.chunk) + "); check the profile or constants it was built from");
      }
    }
  }
  return Status();
}

// Sums, into report->stages[r].time, the ops of stage r's chunks by cause
// (m micro-batches each), and adds the parameters of its chunks to
// stage_params[r] and their hardware FLOPs to *device_flops_sum.
// `chunk_sums` caches the sums of one-chunk stages by program: with one
// chunk per stage, stages running the same program add the same sums to a
// zero breakdown (the hardware FLOPs, summed across stages, still op by op).
void sum_stage_ops(const std::vector<const ChunkProgram*>& programs, const Plan& plan, int r,
                   std::vector<std::pair<const ChunkProgram*, StageBreakdown>>* chunk_sums,
                   StepReport* report, std::vector<double>* stage_params,
                   double* device_flops_sum) {
  const int p = plan.pipeline_parallel, v = plan.virtual_stages;
  const int m = plan.num_micro_batches();
  StageReport& sr = report->stages[r];
  sr.stage = r;
  StageBreakdown& b = sr.time;
  const ChunkProgram* only = v == 1 ? programs[r] : nullptr;
  const StageBreakdown* known = nullptr;
  for (const auto& [prog, sums] : *chunk_sums) {
    if (prog == only) known = &sums;
  }
  for (int c = 0; c < v; ++c) {
    const ChunkProgram& prog = *programs[c * p + r];
    sr.layers += prog.layers;
    (*stage_params)[r] += prog.parameters;
    // What ran: a split backward as its B and W passes.
    const std::vector<LoweredOp>* passes[] = {&prog.forward, &prog.backward, nullptr};
    if (prog.split_backward) {
      passes[1] = &prog.backward_input;
      passes[2] = &prog.backward_weight;
    }
    if (known != nullptr) {
      b = *known;
      for (const auto* ops : passes) {
        if (ops == nullptr) continue;
        for (const LoweredOp& op : *ops) *device_flops_sum += op.flops * m;
      }
      continue;
    }
    for (const auto* ops : passes) {
      if (ops == nullptr) continue;
      for (const LoweredOp& op : *ops) {
        const double total = (op.duration_s - op.slowdown_s) * m;
        switch (op.category) {
          case OpCategory::kCompute: b.compute_s += total; break;
          case OpCategory::kRecompute: b.recompute_s += total; break;
          case OpCategory::kTensorComm: b.tp_comm_s += total; break;
          case OpCategory::kHostOverhead: b.host_overhead_s += total; break;
          case OpCategory::kFp8Cast: b.fp8_cast_s += total; break;
          case OpCategory::kFsdpGather:
            b.fsdp_gather_exposed_s += total;
            break;
          case OpCategory::kFsdpReduceScatter:
            b.fsdp_reduce_scatter_exposed_s += total;
            break;
          case OpCategory::kContextComm: b.cp_comm_s += total; break;
          case OpCategory::kMoeA2a: b.moe_a2a_s += total; break;
          case OpCategory::kCpuOffload: b.cpu_offload_s += total; break;
        }
        b.overlap_slowdown_s += op.slowdown_s * m;
        if (op.expert) b.expert_compute_s += total;
        *device_flops_sum += op.flops * m;
      }
    }
    b.tp_comm_hidden_s += prog.tp_hidden_s * m;
    b.fsdp_hidden_s += prog.fsdp_hidden_s * m;
    b.cp_comm_hidden_s += prog.cp_hidden_s * m;
    b.moe_a2a_hidden_s += prog.moe_a2a_hidden_s * m;
  }
  if (only != nullptr && known == nullptr) chunk_sums->emplace_back(only, b);
}

// The rest of stage r's time: idle time on the compute stream (pipeline
// transfers and bubble), the optimizer, and the data-parallel tail.
void add_stage_waits(const GraphBuilder& builder, int r, StageBreakdown* stage) {
  StageBreakdown& b = *stage;
  // Idle time on the compute stream, split into pipeline transfers and bubble.
  const auto passes = builder.pass_times(r);
  const double busy = passes.busy_s, pp_wait = passes.pp_wait_s;
  const double last_pass_end = passes.last_pass_end_s;
  b.pp_exposed_s = pp_wait;
  b.bubble_s = std::max(0.0, last_pass_end - busy - pp_wait);
  const TaskId opt = builder.optimizer_task(r);
  b.optimizer_s = builder.graph().duration_s(opt);
  b.end_s = builder.end(builder.stage_end_task(r));
  const double after_passes = std::max(0.0, b.end_s - last_pass_end - b.optimizer_s);
  const double gather_slowdown = std::min(after_passes, builder.post_gather_slowdown_s(r));
  b.overlap_slowdown_s += gather_slowdown;
  b.dp_exposed_s = after_passes - gather_slowdown;
  b.dp_comm_hidden_s = std::max(0.0, builder.dp_issued_s(r) - b.dp_exposed_s);
}

// The timeline of every task of the graph (SimOptions::keep_timeline).
void add_timeline(const GraphBuilder& builder, StepReport* report) {
  const TaskGraph& g = builder.graph();
  report->timeline.reserve(g.num_tasks());
  for (TaskId t = 0; t < g.num_tasks(); ++t) {
    TimelineEvent e;
    e.stage = g.stream(t) / kStreamsPerDevice;
    e.stream = g.stream(t) % kStreamsPerDevice;
    e.start_s = builder.start()[t];
    e.end_s = builder.end(t);
    e.name = builder.task_name()[t];
    report->timeline.push_back(std::move(e));
  }
}

}  // namespace

Result<SimSetup> SimSetup::make(const Cluster& cluster,
                                std::shared_ptr<const CostModel> cost_model) {
  LLMPLAN_RETURN_IF_ERROR(validate(cluster));
  SimSetup setup;
  setup.cluster_ = &cluster;
  setup.roofline_ = cost_model == nullptr;
  setup.cost_ = cost_model ? std::move(cost_model) : std::make_shared<Roofline>(cluster);
  setup.cost_description_ = setup.cost_->describe();
  return setup;
}

Result<StepReport> simulate(const Model& model, const Plan& plan, const Cluster& cluster,
                            const SimOptions& options) {
  LLMPLAN_RETURN_IF_ERROR(validate(model, plan));
  auto setup = SimSetup::make(cluster, options.cost_model);
  if (!setup.ok()) return setup.status();
  return simulate(model, plan, setup.value(), options);
}

Result<StepReport> simulate(const Model& model, const Plan& plan, const SimSetup& setup,
                            const SimOptions& options) {
  const Cluster& cluster = setup.cluster();
  LLMPLAN_RETURN_IF_ERROR(validate(model, plan));
  LLMPLAN_RETURN_IF_ERROR(check_precision(plan, cluster.gpu));
  LLMPLAN_RETURN_IF_ERROR(check_host_link(plan, cluster));
  if (cluster.max_gpus() > 0 && plan.world_size() > cluster.max_gpus()) {
    return Status::invalid_argument(
        "plan needs " + std::to_string(plan.world_size()) + " GPUs (tp*cp*pp*dp) but cluster " +
        cluster.name + " has " + std::to_string(cluster.max_gpus()));
  }
  const CostModel& cost = setup.cost();
  const Placement placement = place(plan, cluster);
  const int p = plan.pipeline_parallel;
  std::vector<ChunkProgram> unique;
  const std::vector<const ChunkProgram*> programs =
      lower_plan_chunks(model, plan, placement, cost, &unique);
  LLMPLAN_RETURN_IF_ERROR(check_durations(unique, cost));

  Workspace& workspace = thread_workspace();
  GraphBuilder builder(model, plan, placement, cost, programs, options, &workspace);
  LLMPLAN_RETURN_IF_ERROR(builder.build());

  StepReport report;
  report.num_gpus = plan.world_size();
  report.total_params = static_cast<double>(model.parameter_count());
  report.active_params = static_cast<double>(model.active_parameter_count());
  report.num_tasks = builder.num_tasks();
  report.cost_model = setup.cost_description();
  std::vector<double> stage_params(p, 0.0);
  double device_flops_sum = 0;  // hardware FLOPs summed over one device per stage
  report.stages.resize(p);
  std::vector<std::pair<const ChunkProgram*, StageBreakdown>> chunk_sums;
  for (int r = 0; r < p; ++r) {
    sum_stage_ops(programs, plan, r, &chunk_sums, &report, &stage_params, &device_flops_sum);
    add_stage_waits(builder, r, &report.stages[r].time);
  }
  const std::vector<MemoryBreakdown> memory =
      stage_memory(model, plan, stage_params, options.reserved_bytes,
                   /*fp8_weight_transpose=*/!(cluster.gpu.peak_fp4_flops > 0));
  report.memory_capacity_bytes = cluster.gpu.hbm_bytes;
  for (int r = 0; r < p; ++r) {
    report.stages[r].memory = memory[r];
    report.peak_memory_bytes = std::max(report.peak_memory_bytes, memory[r].total_bytes());
    if (report.stages[r].time.end_s > report.stages[report.critical_stage].time.end_s) {
      report.critical_stage = r;
    }
  }
  report.fits_in_memory = report.peak_memory_bytes <= report.memory_capacity_bytes;
  report.memory_overflow_bytes =
      report.fits_in_memory ? 0.0 : report.peak_memory_bytes - report.memory_capacity_bytes;
  report.breakdown = report.stages[report.critical_stage].time;
  report.iteration_time_s = report.breakdown.end_s + cost.iteration_overhead_s();
  // Finite durations can still add up past the largest double.
  if (!std::isfinite(report.iteration_time_s) || !(report.iteration_time_s > 0)) {
    return Status::invalid_argument(
        "simulate: the iteration time is " + std::to_string(report.iteration_time_s) +
        " s: the cost model's (" + cost.describe() +
        ") kernel and collective times are out of range; check the profile or constants");
  }

  // MFU against the 16-bit peak, fp8 plans included (the convention of
  // Megatron-Core and NeMo reports: FP8's gain shows as a higher MFU).
  const double peak = mfu_reference_peak_flops(cluster.gpu, plan.precision);
  // Devices per stage, each doing what the simulated one does.
  const double replicas =
      static_cast<double>(plan.tensor_parallel) * plan.context_parallel * plan.data_parallel;
  report.model_flops = model.model_flops_per_step(plan.global_batch_size);
  report.hardware_flops = device_flops_sum * replicas;
  const double capacity = report.iteration_time_s * plan.world_size() * peak;
  report.mfu = report.model_flops / capacity;
  report.hfu = report.hardware_flops / capacity;
  report.tokens_per_s =
      static_cast<double>(plan.global_batch_size) * model.seq_length / report.iteration_time_s;
  if (setup.roofline()) {
    report.caveats = roofline_caveats(model, plan, cluster.gpu, report.mfu);
  }

  if (options.keep_timeline) add_timeline(builder, &report);
  workspace.graph.trim(kKeptWorkspaceTasks);
  if (workspace.start.capacity() > kKeptWorkspaceTasks) workspace.start = {};
  return report;
}

}  // namespace llmplan::simulator

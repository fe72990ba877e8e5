#include <algorithm>
#include <cmath>
#include <string>

#include "simulator/simulate_internal.h"

namespace llmplan::simulator::simulate_internal {

GraphBuilder::GraphBuilder(const Model& model, const Plan& plan, const Placement& placement,
                           const CostModel& cost,
                           const std::vector<const ChunkProgram*>& programs,
                           const SimOptions& options, Workspace* workspace)
    : model_(model), plan_(plan), placement_(placement), cost_(cost), programs_(programs),
      options_(options), p_(plan.pipeline_parallel), v_(plan.virtual_stages),
      m_(plan.num_micro_batches()), graph_(workspace->graph), start_(workspace->start),
      stages_(workspace->stages), send_fwd_(workspace->send_fwd),
      send_bwd_(workspace->send_bwd), send_fwd_end_(workspace->send_fwd_end),
      send_bwd_end_(workspace->send_bwd_end),
      fast_(!options.reference_engine && options.collapse_chains && !options.keep_timeline) {
  graph_.reset(plan.pipeline_parallel * kStreamsPerDevice,
               options.reference_engine ? Replay::kDeferred : Replay::kEager);
  start_.clear();
}

double GraphBuilder::max_tasks() const {
  const int chunks = p_ * v_;
  double tasks = 4.0 * p_;
  for (int j = 0; j < chunks; ++j) {
    const ChunkProgram& prog = *programs_[j];
    const double forward_ops = static_cast<double>(prog.forward.size());
    // A split backward runs as two passes (B and W).
    const double backward_ops = static_cast<double>(
        prog.split_backward ? prog.backward_input.size() + prog.backward_weight.size()
                            : prog.backward.size());
    const double per_pass_f = options_.collapse_chains ? 1.0 : forward_ops;
    const double per_pass_b =
        options_.collapse_chains ? (prog.split_backward ? 2.0 : 1.0) : backward_ops;
    tasks += static_cast<double>(m_) * (per_pass_f + per_pass_b + 2.0);
    // Overlapped buckets (up to two per cut: dense and expert) and the
    // pieces they split.
    tasks += 3.0 * backward_ops;
    const double bucket = static_cast<double>(plan_.grad_bucket_bytes);
    tasks += bucket > 0 ? std::ceil(prog.grad_bytes / bucket) : 1.0;
    tasks += bucket > 0 ? std::ceil(prog.expert_grad_bytes / bucket) : 1.0;
  }
  return tasks;
}

Status GraphBuilder::build() {
  const int chunks = p_ * v_;
  const double estimate = max_tasks();
  const double limit = options_.keep_timeline ? kMaxTimelineTasks : kMaxSimulatedTasks;
  if (!(estimate <= limit)) {
    return Status::invalid_argument(
        "simulate: this iteration would need up to " + std::to_string(std::llround(estimate)) +
        " simulated tasks, more than the limit of " + std::to_string(std::llround(limit)) +
        (options_.keep_timeline ? " with a trace" : "") +
        " (fewer micro-batches, larger gradient buckets" +
        (options_.collapse_chains ? std::string(")") : std::string(", or no --task-level)")));
  }
  graph_.reserve(static_cast<size_t>(estimate),
                 graph_.replay() == Replay::kEager ? 0 : static_cast<size_t>(estimate) * 2);
  if (fast_) {
    // One more row before and after the chunks' rows: the first chunk's
    // forward and the last chunk's backward read a transfer that "ended"
    // at 0 (which never delays a pass nor counts as a wait: a pass starts
    // at >= 0), so the 1F1B loop needs no test for the end stages.
    const size_t rows = static_cast<size_t>(chunks) + 2;
    send_fwd_end_.assign(rows * m_, -1.0);
    send_bwd_end_.assign(rows * m_, -1.0);
    std::fill_n(send_fwd_end_.begin(), m_, 0.0);
    std::fill_n(send_bwd_end_.end() - m_, m_, 0.0);
    fwd_end_ = send_fwd_end_.data() + m_;
    bwd_end_ = send_bwd_end_.data() + m_;
  } else {
    send_fwd_.assign(static_cast<size_t>(chunks) * m_, -1);
    send_bwd_.assign(static_cast<size_t>(chunks) * m_, -1);
  }
  stage_end_task_.assign(p_, -1);
  optimizer_task_.assign(p_, -1);
  dp_issued_s_.assign(p_, 0.0);
  post_gather_hidden_s_.assign(p_, 0.0);
  post_gather_slowdown_s_.assign(p_, 0.0);
  // Pipeline transfer times per chunk (forward to the next chunk's stage,
  // backward to the previous one's), computed once.
  send_fwd_s_.assign(chunks, 0.0);
  send_bwd_s_.assign(chunks, 0.0);
  for (int j = 0; j < chunks; ++j) {
    const int r = j % p_;
    if (j < chunks - 1) send_fwd_s_[j] = transfer_s(*programs_[j], r);
    if (j > 0) send_bwd_s_[j] = transfer_s(*programs_[j], (r + p_ - 1) % p_);
  }
  stages_.resize(p_);
  for (int r = 0; r < p_; ++r) {
    StageState& st = stages_[r];
    st.next = 0;
    st.done = false;
    st.previous = -1;
    st.dp_tasks.clear();
    st.segments.clear();
    st.compute_end_s = st.pipe_forward_end_s = st.pipe_backward_end_s = 0;
    st.any_pass = false;
    st.busy_s = st.pp_wait_s = 0;
    st.last_backward.assign(v_, -1);
    const bool zb = plan_.schedule == Schedule::kZbH1;
    st.generated = fast_ && (plan_.schedule == Schedule::kOneFOneB || zb) && v_ == 1;
    if (st.generated) {
      st.steps.clear();
      st.warmup = std::min(p_ - r - 1, m_);
      st.count = (zb ? 3 : 2) * static_cast<size_t>(m_);
      // The last step is a full backward (1F1B) or a W step (zb-h1: the
      // cool-down's last W, or the last of the pending ones).
      st.last_backward[0] = static_cast<int>(st.count) - 1;
    } else {
      st.steps = stage_schedule(plan_, r);
      st.count = st.steps.size();
      for (size_t k = 0; k < st.steps.size(); ++k) {
        const PipelineStep& step = st.steps[k];
        // The gradients are final after the full backward or the W step.
        if (!step.forward && step.backward != BackwardKind::kInput) {
          st.last_backward[step.virtual_chunk] = static_cast<int>(k);
        }
      }
    }
    if (!fast_) st.segments.reserve(st.count);
  }
  overlap_buckets_ =
      (dense_dp() || expert_dp()) && plan_.overlap_grad_reduce && plan_.sharding_stage() <= 1;
  if (fast_) {
    LLMPLAN_RETURN_IF_ERROR(run_fast());
  } else {
    LLMPLAN_RETURN_IF_ERROR(run_reference());
  }
  LLMPLAN_RETURN_IF_ERROR(duration_error_);
  if (graph_.replay() == Replay::kDeferred) graph_.run(&start_);
  return Status();
}

GraphBuilder::PassTimes GraphBuilder::pass_times(int r) const {
  PassTimes t;
  if (fast_) {
    t.busy_s = stages_[r].busy_s;
    t.pp_wait_s = stages_[r].pp_wait_s;
    t.last_pass_end_s = stages_[r].compute_end_s;
    return t;
  }
  double prev_end = 0;
  for (const Segment& seg : stages_[r].segments) {
    const double s = start()[seg.first];
    const double gap = s - prev_end;
    if (gap > 0 && seg.transfer_in >= 0 && end(seg.transfer_in) >= s - 1e-15) {
      t.pp_wait_s += std::min(gap, graph_.duration_s(seg.transfer_in));
    }
    t.busy_s += end(seg.last) - s;
    prev_end = end(seg.last);
  }
  t.last_pass_end_s = prev_end;
  return t;
}

void GraphBuilder::record_bad_duration(int stage, double duration, const Label& label) {
  if (!duration_error_.ok()) return;
  const std::string value = std::isnan(duration)   ? "NaN"
                            : std::isinf(duration) ? "infinite"
                                                   : std::to_string(duration) + " s";
  duration_error_ = Status::invalid_argument(
      "simulate: the cost model (" + cost_.describe() + ") gave a " + value +
      " duration for \"" + label.str() + "\" on stage " + std::to_string(stage) +
      "; check the profile or constants it was built from");
}

void GraphBuilder::after_passes(int r, TaskId t) {
  const StageState& state = stages_[r];
  if (fast_) {
    if (state.any_pass) graph_.add_dependency_on_time(state.compute_end_s, t);
  } else if (state.previous >= 0) {
    graph_.add_dependency(state.previous, t);
  }
}

void GraphBuilder::reduce_gradients_after_passes(int r) {
  std::vector<TaskId>& dp_tasks = stages_[r].dp_tasks;
  const bool has_dp = dense_dp();  // d * cp ranks share the gradients
  const int stage = plan_.sharding_stage();
  // Without overlap: reduce every chunk's gradients after the stage's last pass.
  if (!plan_.overlap_grad_reduce && stage <= 1) {
    for (int c = 0; c < v_; ++c) {
      const ChunkProgram& prog = *programs_[c * p_ + r];
      for (double bytes : has_dp ? bucket_list(prog.grad_bytes) : std::vector<double>()) {
        const TaskId t = add_dp(r, dp_time(grad_kind(), bytes, grad_group()),
                                Label{dp_label(grad_kind()), -1, c * p_ + r});
        after_passes(r, t);
        dp_tasks.push_back(t);
      }
      if (!expert_dp() || prog.expert_grad_bytes <= 0) continue;
      for (double bytes : bucket_list(prog.expert_grad_bytes)) {
        const TaskId t = add_dp(r, dp_time(grad_kind(), bytes, placement_.expert_data),
                                Label{expert_dp_label(grad_kind()), -1, c * p_ + r});
        after_passes(r, t);
        dp_tasks.push_back(t);
      }
    }
  }
  // Tied embeddings split over the first and last stage: sum their gradients.
  if (p_ > 1 && model_.tied_embeddings && (r == 0 || r == p_ - 1)) {
    CollectiveDesc c;
    c.kind = CollectiveKind::kAllReduce;
    c.bytes = static_cast<double>(model_.vocab_size) * model_.hidden_size /
              plan_.tensor_parallel * plan_.grad_reduce_bytes();
    c.group = placement_.embedding;
    const TaskId t =
        add_dp(r, cost_.collective_time_s(c), Label{"embedding gradient all_reduce"});
    after_passes(r, t);
    dp_tasks.push_back(t);
  }
}

TaskId GraphBuilder::optimizer_step(int r, const StageSums& sums) {
  std::vector<TaskId>& dp_tasks = stages_[r].dp_tasks;
  const int stage = plan_.sharding_stage();
  const double params = sums.params, grad_bytes = sums.grad_bytes;
  const double expert_params = sums.expert_params;
  // Hybrid sharding: all-reduce this rank's 1/S gradient shard across the
  // d/S replicas, once per step after the shard's reduction.
  // Routed experts are sharded over the whole expert-data group (no hybrid
  // replicas); the rest as before.
  const double dense_params = params - expert_params;
  const int edp = placement_.expert_data.size;
  const int S = plan_.shard_ranks();
  if (stage >= 1 && placement_.replica.size > 1) {
    const TaskId t =
        add_dp(r, dp_time(CollectiveKind::kAllReduce, grad_bytes / S, placement_.replica),
               Label{"dp all_reduce gradient shard across replicas"});
    after_passes(r, t);
    for (TaskId d : dp_tasks) graph_.add_dependency(d, t);
    dp_tasks.push_back(t);
  }
  // Optimizer step over this device's shard.
  const double shard = !model_.is_moe() ? (stage >= 1 ? params / S : params)
                       : stage >= 1     ? dense_params / S + expert_params / edp
                                        : params;
  KernelDesc opt;
  opt.kind = KernelKind::kOptimizerStep;
  opt.pass = Pass::kForward;
  opt.bytes = shard * kAdamBytesPerParameter;
  opt.precision = low_precision(plan_.precision) ? Precision::kBf16 : plan_.precision;
  // One launch after the pass: at least the host's launch interval.
  double opt_s = std::max(cost_.kernel_time_s(opt), cost_.launch_interval_s());
  if (low_precision(plan_.precision) && stage < 3) {
    // The updated layer weights cast to their cached fp8 / nvfp4 copies
    // (simulator/precision.h).
    double layer_params = 0;
    for (int c = 0; c < v_; ++c) layer_params += programs_[c * p_ + r]->layer_parameters;
    KernelDesc cast;
    cast.kind = KernelKind::kFp8CastTranspose;
    cast.pass = Pass::kForward;
    cast.precision = plan_.precision;
    cast.bytes = layer_params * cast_bytes_per_element(plan_, cost_.fp8_transpose_copy());
    opt_s += std::max(cost_.kernel_time_s(cast), cost_.launch_interval_s());
  }
  const TaskId o = add(r, StreamKind::kCompute, opt_s, Label{"optimizer step"});
  after_passes(r, o);
  for (TaskId t : dp_tasks) graph_.add_dependency(t, o);
  return o;
}

void GraphBuilder::gather_parameters(int r, TaskId o, const StageSums& sums) {
  const bool has_dp = dense_dp();  // d * cp ranks share the gradients
  const int stage = plan_.sharding_stage();
  const double params = sums.params, expert_params = sums.expert_params;
  // Routed experts are sharded over the whole expert-data group.
  const double dense_params = params - expert_params;
  const int S = plan_.shard_ranks();
  // Stages 1 and 2: gather the updated bf16 parameters over the shard group
  // (stage 3 gathers per layer in the passes). With overlap_param_gather it
  // runs under the next iteration's first forward pass of each of the
  // stage's chunks: only what does not fit is exposed (the steady state of
  // consecutive iterations, counted at the end of this one), plus the SM
  // contention of the hidden part.
  // FP8 tensor scaling (delayed or current) at ZeRO-1: the transformer
  // layers' weights are fp8 parameters gathered at 1 byte each, the rest
  // (embedding, output layer, bf16 layers) at 2 -- NVIDIA's recipes set
  // fp8_param_gather (NeMo 2 nemo/collections/llm/recipes/precision/
  // mixed_precision.py bf16_with_fp8_mixed and
  // bf16_with_fp8_current_scaling_mixed; False for MXFP8), which the memory
  // model already assumes (memory.h). Dense models only: the MoE gathers
  // keep 2 bytes (the programs do not split the fp8 weights by group).
  double dense_gather_bytes = 2.0 * (model_.is_moe() ? dense_params : params);
  // A plan without fp8_param_gather (Plan::fp8_param_gather) gathers its
  // bf16 parameters at 2 bytes.
  if (stage == 1 && !model_.is_moe() && plan_.precision == Precision::kFp8 &&
      plan_.fp8_recipe != Fp8Recipe::kMxfp8 && plan_.fp8_param_gather) {
    double layer_params = 0;
    for (int c = 0; c < v_; ++c) layer_params += programs_[c * p_ + r]->layer_parameters;
    dense_gather_bytes -= layer_params;
  }
  const bool gather_experts = expert_dp() && expert_params > 0;
  if ((stage == 1 || stage == 2) && ((has_dp && S > 1) || gather_experts)) {
    double full = dp_time(CollectiveKind::kAllGather, dense_gather_bytes, placement_.shard);
    if (gather_experts) {
      full += dp_time(CollectiveKind::kAllGather, expert_params * 2.0, placement_.expert_data);
    }
    double duration = full;
    if (plan_.overlap_param_gather) {
      double forward = 0;
      for (int c = 0; c < v_; ++c) forward += programs_[c * p_ + r]->forward_s;
      const double hidden = std::min(full, forward);
      post_gather_hidden_s_[r] = hidden;
      post_gather_slowdown_s_[r] = cost_.comm_compute_slowdown() * hidden;
      duration = full - hidden + post_gather_slowdown_s_[r];
    }
    const TaskId g = add(r, StreamKind::kDataComm, duration, Label{"dp all_gather parameters"});
    dp_issued_s_[r] += full;
    graph_.add_dependency(o, g);
    stage_end_task_[r] = g;
  }
}

void GraphBuilder::finish_stage(int r) {
  reduce_gradients_after_passes(r);
  // The stage's parameters and gradient bytes over its chunks.
  StageSums sums;
  for (int c = 0; c < v_; ++c) {
    sums.params += programs_[c * p_ + r]->parameters;
    sums.grad_bytes += programs_[c * p_ + r]->grad_bytes;
    sums.expert_params += programs_[c * p_ + r]->expert_parameters;
  }
  const TaskId o = optimizer_step(r, sums);
  optimizer_task_[r] = o;
  stage_end_task_[r] = o;
  gather_parameters(r, o, sums);
}

TaskId GraphBuilder::add_dp(int stage, double duration, const Label& label) {
  dp_issued_s_[stage] += duration;
  return add(stage, StreamKind::kDataComm, duration, label);
}

std::vector<bool> GraphBuilder::bucket_cuts(const std::vector<LoweredOp>& ops,
                                            std::vector<double>* sizes,
                                            std::vector<double>* expert_sizes) const {
  std::vector<bool> cut(ops.size(), false);
  const double bucket = static_cast<double>(plan_.grad_bucket_bytes);
  double acc = 0, expert_acc = 0;
  size_t last_ready = 0;
  bool any = false;
  for (size_t k = 0; k < ops.size(); ++k) {
    if (ops[k].grad_ready_bytes <= 0 && ops[k].expert_grad_ready_bytes <= 0) continue;
    acc += ops[k].grad_ready_bytes;
    expert_acc += ops[k].expert_grad_ready_bytes;
    last_ready = k;
    any = true;
    if (bucket > 0 && (acc >= bucket || expert_acc >= bucket)) {
      cut[k] = true;
      sizes->push_back(acc);
      expert_sizes->push_back(expert_acc);
      acc = expert_acc = 0;
    }
  }
  if (any && (acc > 0 || expert_acc > 0)) {
    cut[last_ready] = true;
    sizes->push_back(acc);
    expert_sizes->push_back(expert_acc);
  }
  return cut;
}

std::vector<double> GraphBuilder::bucket_list(double bytes) const {
  const double bucket = static_cast<double>(plan_.grad_bucket_bytes);
  if (bucket <= 0 || bytes <= bucket) return {bytes};
  const size_t full = static_cast<size_t>(std::floor(bytes / bucket));
  std::vector<double> out(full, bucket);
  const double rest = bytes - static_cast<double>(full) * bucket;
  if (rest > 0) out.push_back(rest);
  return out;
}

double GraphBuilder::dp_time(CollectiveKind kind, double bytes, const CommGroup& group) const {
  CollectiveDesc c;
  c.kind = kind;
  c.bytes = bytes;
  c.group = group;
  return cost_.collective_time_s(c);
}

double GraphBuilder::transfer_s(const ChunkProgram& prog, int boundary) const {
  return pipeline_transfer_s(prog, placement_, cost_, boundary);
}

}  // namespace llmplan::simulator::simulate_internal

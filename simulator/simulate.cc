#include "simulator/simulate.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <deque>

#include "simulator/engine.h"
#include "simulator/lowering.h"
#include "simulator/roofline.h"
#include "simulator/schedule.h"

namespace llmplan::simulator {
namespace {

// A task's name in the timeline, formatted only when a timeline is kept.
struct Label {
  const char* what = "";  // "F", "B", "send act", "dp all_reduce bucket", ...
  int micro_batch = -1;
  int chunk = -1;
  int index = -1;         // bucket number
  const char* op = nullptr;  // kernel name in task-level mode

  std::string str() const {
    std::string s;
    if (op != nullptr) s.append(op).append(" ");
    s.append(what);
    if (micro_batch >= 0) s.append(" mb").append(std::to_string(micro_batch));
    if (index >= 0) s.append(" ").append(std::to_string(index));
    if (chunk >= 0) s.append(" c").append(std::to_string(chunk));
    return s;
  }
};

// A micro-batch pass as it landed in the task graph.
struct Segment {
  TaskId first = -1, last = -1;
  TaskId transfer_in = -1;  // pipeline transfer this pass waited for, or -1
};

// The stages' pipeline state while the graph is built.
struct StageState {
  std::vector<PipelineStep> steps;  // empty when `generated`
  // Fast path, 1F1B: the steps are computed from their index (step_at)
  // instead of being listed: `warmup` forwards, m - warmup (F, B) pairs,
  // warmup backwards, as stage_schedule() lists them.
  bool generated = false;
  int warmup = 0;
  size_t count = 0;                 // steps of the stage
  bool queued = false;              // fast path: on the work list
  // Per virtual chunk: where its DP buckets fire (its last full backward or W step).
  std::vector<int> last_backward;
  size_t next = 0;
  bool done = false;
  TaskId previous = -1;            // last compute-stream task of the stage
  // Fast path (passes and transfers kept outside the graph): the stage's
  // stream ends, and the compute stream's idle-time accounting as
  // simulate() does it from segments on the reference path.
  double compute_end_s = 0, pipe_forward_end_s = 0, pipe_backward_end_s = 0;
  bool any_pass = false;
  double busy_s = 0, pp_wait_s = 0;
  std::vector<TaskId> dp_tasks;
  std::vector<Segment> segments;
};

// Buffers one simulation needs, kept per thread and reused by the next
// simulation on that thread (so a planner's thousands of simulations do not
// allocate and page in fresh memory each time). Nothing in them carries from
// one simulation to the next: build() resets every one before use.
struct Workspace {
  TaskGraph graph{0};
  std::vector<double> start;
  std::vector<StageState> stages;
  std::vector<TaskId> send_fwd, send_bwd;  // per (chunk, micro-batch), -1 until emitted
  // Fast path: the transfers' end times, per (chunk, micro-batch), -1 until emitted.
  std::vector<double> send_fwd_end, send_bwd_end;
};

// Buffers above this many tasks (task-level or huge simulations) are freed
// after use instead of being kept.
constexpr size_t kKeptWorkspaceTasks = size_t{1} << 18;

Workspace& thread_workspace() {
  thread_local Workspace workspace;
  return workspace;
}

// Builds the task graph of one iteration and keeps what accounting needs.
//
// Passes are emitted as a wavefront across stages: a stage emits its next
// pass only once the pipeline transfer that pass waits for exists, so every
// dependency points to an earlier task (the engine's requirement).
class GraphBuilder {
 public:
  GraphBuilder(const Model& model, const Plan& plan, const Placement& placement,
               const CostModel& cost, const std::vector<const ChunkProgram*>& programs,
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

  // An upper bound on the tasks build() adds (computed in double, so it
  // cannot overflow): per pass one task (or one per op at task level) and a
  // pipeline send; per chunk the data-parallel buckets (at most one per
  // backward op when they overlap, grad_bytes / bucket size otherwise); per
  // stage the embedding all-reduce, hybrid all-reduce, optimizer and
  // parameter all-gather.
  double max_tasks() const {
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

  Status build() {
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
      st.generated = fast_ && plan_.schedule == Schedule::kOneFOneB && v_ == 1;
      if (st.generated) {
        st.steps.clear();
        st.warmup = std::min(p_ - r - 1, m_);
        st.count = 2 * static_cast<size_t>(m_);
        st.last_backward[0] = static_cast<int>(st.count) - 1;  // the last step is a backward
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
      int finished = 0;
      while (finished < p_) {
        bool progress = false;
        for (int r = 0; r < p_; ++r) {
          StageState& st = stages_[r];
          if (st.done) continue;
          while (st.next < st.count && emit_step(r)) {
            ++st.next;
            progress = true;
          }
          if (st.next == st.count) {
            finish_stage(r);
            st.done = true;
            ++finished;
            progress = true;
          }
        }
        if (!progress) return Status::internal("pipeline schedule deadlocked (schedule bug)");
      }
    }
    LLMPLAN_RETURN_IF_ERROR(duration_error_);
    if (graph_.replay() == Replay::kDeferred) graph_.run(&start_);
    return Status();
  }

  const TaskGraph& graph() const { return graph_; }
  const std::vector<double>& start() const {
    return graph_.replay() == Replay::kEager ? graph_.eager_starts() : start_;
  }
  double end(TaskId t) const { return start()[t] + graph_.duration_s(t); }
  // Tasks in the iteration, the fast path's passes and transfers included.
  int num_tasks() const { return graph_.num_tasks() + external_tasks_; }
  // The compute stream's idle time of stage r split as simulate() reports it:
  // busy (passes), waits for pipeline transfers, and when the last pass ends.
  struct PassTimes {
    double busy_s = 0, pp_wait_s = 0, last_pass_end_s = 0;
  };
  PassTimes pass_times(int r) const {
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
  TaskId optimizer_task(int r) const { return optimizer_task_[r]; }
  TaskId stage_end_task(int r) const { return stage_end_task_[r]; }
  const std::vector<std::string>& task_name() const { return task_name_; }
  // Per stage: full time of the DP tasks issued; the post-optimizer gather's
  // hidden time and the SM contention added for it (overlap_param_gather).
  double dp_issued_s(int r) const { return dp_issued_s_[r]; }
  double post_gather_hidden_s(int r) const { return post_gather_hidden_s_[r]; }
  double post_gather_slowdown_s(int r) const { return post_gather_slowdown_s_[r]; }

 private:

  size_t idx(int chunk, int micro_batch) const {
    return static_cast<size_t>(chunk) * m_ + micro_batch;
  }
  int stream_id(int stage, StreamKind s) const {
    return stage * kStreamsPerDevice + static_cast<int>(s);
  }

  // Records a duration the cost model got wrong as the build's error (the first one only).
  void record_bad_duration(int stage, double duration, const Label& label) {
    if (!duration_error_.ok()) return;
    const std::string value = std::isnan(duration)   ? "NaN"
                              : std::isinf(duration) ? "infinite"
                                                     : std::to_string(duration) + " s";
    duration_error_ = Status::invalid_argument(
        "simulate: the cost model (" + cost_.describe() + ") gave a " + value +
        " duration for \"" + label.str() + "\" on stage " + std::to_string(stage) +
        "; check the profile or constants it was built from");
  }

  // Adds a task. A duration the cost model got wrong (negative, NaN, or
  // infinite, e.g. from a profile or constants file with absurd values) is
  // recorded as the build's error and replaced by 0 so the build can finish.
  TaskId add(int stage, StreamKind s, double duration, const Label& label) {
    if (!(duration >= 0) || !std::isfinite(duration)) {
      record_bad_duration(stage, duration, label);
      duration = 0;
    }
    const TaskId t = graph_.add_task(stream_id(stage, s), duration);
    if (options_.keep_timeline) task_name_.push_back(label.str());
    return t;
  }

  // Adds the first task of a pass: after the stage's previous work and, if
  // any, the pipeline transfer it consumes.
  TaskId add_first(int stage, StreamKind s, double duration, const Label& label, TaskId previous,
                   TaskId transfer) {
    const TaskId t = add(stage, s, duration, label);
    if (previous >= 0) graph_.add_dependency(previous, t);
    if (transfer >= 0) graph_.add_dependency(transfer, t);
    return t;
  }

  // Emits one micro-batch pass. Fills op_task (the task each op ran in) when
  // given; splits collapsed passes after the ops marked in split_after.
  Segment emit_pass(int stage, const std::vector<LoweredOp>& ops, double total_s,
                    const Label& label, TaskId previous, TaskId transfer,
                    std::vector<TaskId>* op_task, const std::vector<bool>* split_after) {
    Segment seg;
    seg.transfer_in = transfer;
    if (options_.collapse_chains && split_after == nullptr) {
      // The whole pass is one task; its duration was summed once when lowering.
      seg.first = seg.last = add_first(stage, StreamKind::kCompute, total_s, label, previous,
                                       transfer);
      if (op_task != nullptr) op_task->assign(ops.size(), seg.first);
    } else if (options_.collapse_chains) {
      double acc = 0;
      size_t piece_start = 0;
      for (size_t k = 0; k < ops.size(); ++k) {
        acc += ops[k].duration_s;
        const bool cut = k + 1 == ops.size() || (*split_after)[k];
        if (!cut) continue;
        TaskId t;
        if (seg.first < 0) {
          t = seg.first = add_first(stage, StreamKind::kCompute, acc, label, previous, transfer);
        } else {
          t = add(stage, StreamKind::kCompute, acc, label);
          graph_.add_dependency(seg.last, t);
        }
        if (op_task != nullptr) {
          for (size_t q = piece_start; q <= k; ++q) (*op_task)[q] = t;
        }
        seg.last = t;
        acc = 0;
        piece_start = k + 1;
      }
    } else {
      for (size_t k = 0; k < ops.size(); ++k) {
        Label op_label = label;
        op_label.op = ops[k].name;
        TaskId t;
        if (seg.first < 0) {
          t = seg.first = add_first(stage, ops[k].stream, ops[k].duration_s, op_label, previous,
                                    transfer);
        } else {
          t = add(stage, ops[k].stream, ops[k].duration_s, op_label);
          graph_.add_dependency(seg.last, t);
        }
        if (op_task != nullptr) (*op_task)[k] = t;
        seg.last = t;
      }
    }
    return seg;
  }

  // Whether gradients are reduced over more than one rank: the dense ones
  // over d * cp ranks, the routed experts' over the edp ranks of
  // Placement::expert_data (MoE models only).
  bool dense_dp() const { return plan_.grad_reduce_ranks() > 1; }
  bool expert_dp() const { return model_.is_moe() && placement_.expert_data.size > 1; }

  // Per-step gradient reduction (stages 0 and 1): an all-reduce over the DP
  // group, or (sharded optimizer) a reduce-scatter over the shard group
  // (routed experts: over Placement::expert_data in both cases).
  CollectiveKind grad_kind() const {
    return plan_.sharding_stage() >= 1 ? CollectiveKind::kReduceScatter
                                       : CollectiveKind::kAllReduce;
  }
  const CommGroup& grad_group() const {
    return plan_.sharding_stage() >= 1 ? placement_.shard : placement_.data;
  }

  // Emits the next pass of stage r, or returns false if the transfer it
  // waits for has not been emitted yet.
  bool emit_step(int r) {
    StageState& state = stages_[r];
    const int k = static_cast<int>(state.next);
    const PipelineStep& st = state.steps[k];
    const int chunks = p_ * v_;
    const int j = st.virtual_chunk * p_ + r;
    // A W step (split backward) waits only for the stage's previous work:
    // its B, earlier on the same stream, consumed the gradient transfer.
    const bool weight = !st.forward && st.backward == BackwardKind::kWeight;
    const bool input = !st.forward && st.backward == BackwardKind::kInput;
    TaskId transfer = -1;
    if (st.forward && j > 0) {
      transfer = send_fwd_[idx(j - 1, st.micro_batch)];
      if (transfer < 0) return false;
    } else if (!st.forward && !weight && j < chunks - 1) {
      transfer = send_bwd_[idx(j + 1, st.micro_batch)];
      if (transfer < 0) return false;
    }
    const ChunkProgram& prog = *programs_[j];
    const Label label{st.forward ? "F" : (weight ? "W" : "B"), st.micro_batch, j};
    const std::vector<LoweredOp>& ops = st.forward ? prog.forward
                                        : weight   ? prog.backward_weight
                                        : input    ? prog.backward_input
                                                   : prog.backward;
    const double total_s = st.forward ? prog.forward_s
                           : weight   ? prog.backward_weight_s
                           : input    ? prog.backward_input_s
                                      : prog.backward_s;
    // Stages 2 and 3 reduce-scatter every micro-batch inside the passes (lowering.h).
    const bool overlap =
        (dense_dp() || expert_dp()) && plan_.overlap_grad_reduce && plan_.sharding_stage() <= 1;
    const bool buckets_here = overlap && !st.forward && k == state.last_backward[st.virtual_chunk];
    std::vector<bool> split;
    std::vector<TaskId> op_task;
    std::vector<double> bucket_sizes, expert_bucket_sizes;
    if (buckets_here) {
      split = bucket_cuts(ops, &bucket_sizes, &expert_bucket_sizes);
      op_task.assign(ops.size(), -1);
    }
    const Segment seg = emit_pass(r, ops, total_s, label, state.previous, transfer,
                                  buckets_here ? &op_task : nullptr,
                                  buckets_here ? &split : nullptr);
    state.segments.push_back(seg);
    state.previous = seg.last;
    if (st.forward && j < chunks - 1) {
      const TaskId s = add(r, StreamKind::kPipeForward, send_fwd_s_[j],
                           Label{"send activation", st.micro_batch, j});
      graph_.add_dependency(seg.last, s);
      send_fwd_[idx(j, st.micro_batch)] = s;
    } else if (!st.forward && !weight && j > 0) {
      // The input gradient leaves as soon as the full backward or B ends.
      const TaskId s = add(r, StreamKind::kPipeBackward, send_bwd_s_[j],
                           Label{"send gradient", st.micro_batch, j});
      graph_.add_dependency(seg.last, s);
      send_bwd_[idx(j, st.micro_batch)] = s;
    }
    if (buckets_here) {
      size_t b = 0;
      for (size_t q = 0; q < ops.size(); ++q) {
        if (!split[q]) continue;
        if (dense_dp() && bucket_sizes[b] > 0) {
          const TaskId t = add_dp(r, dp_time(grad_kind(), bucket_sizes[b], grad_group()),
                                  Label{dp_label(grad_kind()), -1, j, static_cast<int>(b)});
          graph_.add_dependency(op_task[q], t);
          state.dp_tasks.push_back(t);
        }
        if (expert_dp() && expert_bucket_sizes[b] > 0) {
          const TaskId t =
              add_dp(r, dp_time(grad_kind(), expert_bucket_sizes[b], placement_.expert_data),
                     Label{expert_dp_label(grad_kind()), -1, j, static_cast<int>(b)});
          graph_.add_dependency(op_task[q], t);
          state.dp_tasks.push_back(t);
        }
        ++b;
      }
    }
    return true;
  }

  // The fast path's wavefront: a work list of stages that may progress. A
  // stage runs its steps until one waits for a transfer not yet emitted;
  // the stage that emits that transfer puts it back on the list. Which
  // stage runs first does not change any time (each stage's streams are its
  // own, in its own step order), only how little work is wasted on
  // stages that cannot progress.
  Status run_fast() {
    // 1F1B with a full pipeline: a fixed order in which every step's
    // transfer is already emitted (see run_ordered_1f1b).
    if (plan_.schedule == Schedule::kOneFOneB && v_ == 1 && m_ >= p_) run_ordered_1f1b();
    worklist_.clear();
    for (int r = p_ - 1; r >= 0; --r) {
      worklist_.push_back(r);
      stages_[r].queued = true;
    }
    int finished = 0;
    while (!worklist_.empty()) {
      const int r = worklist_.back();
      worklist_.pop_back();
      StageState& st = stages_[r];
      st.queued = false;
      if (st.done) continue;
      while (st.next < st.count && emit_step_fast(r)) ++st.next;
      if (st.next == st.count) {
        finish_stage(r);
        st.done = true;
        ++finished;
      }
    }
    if (finished < p_) return Status::internal("pipeline schedule deadlocked (schedule bug)");
    return Status();
  }

  // Steps of a 1F1B pipeline with m >= p in an order that respects every
  // dependency, so none waits: step k of stage r goes at priority
  //   2k + r                      warm-up and steady (F, B) steps,
  //   2k + 2 (p - 1 - r) + p      the cool-down backwards (k >= 2m - w_r),
  // with w_r = p - 1 - r warm-up forwards. A forward of micro-batch i on r
  // needs r - 1's, which is at a lower priority in every phase; a backward
  // needs r + 1's, likewise (the priorities were checked case by case: warm-up
  // and steady forwards, steady and cool-down backwards, and the steady to
  // cool-down change, 3r < 3p). Each stage's steps keep their order. A step
  // that would wait anyway stops the loop: run_fast's work list finishes.
  void run_ordered_1f1b() {
    // Pass and transfer times per chunk (v = 1: chunk = stage); the lean
    // loop below needs them all valid, else the general step reports the
    // bad one exactly as the reference engine does.
    auto good = [](double d) { return d >= 0 && std::isfinite(d); };
    for (int r = 0; r < p_; ++r) {
      const ChunkProgram& prog = *programs_[r];
      if (!good(prog.forward_s) || !good(prog.backward_s) || !good(send_fwd_s_[r]) ||
          !good(send_bwd_s_[r])) {
        return;
      }
    }
    // Which steps have priority t, without trying every stage: a warm-up or
    // steady step k = (t - r) / 2 of a stage r of t's parity, valid while
    // k < 2m - w_r, that is t < 4m - 2p + 2 + 3r; a cool-down step
    // k = (t - 3p + 2 + 2r) / 2 for t - p even, which is a cool-down step
    // (k >= 2m - w_r) exactly when t >= 4m + p, and exists while k < 2m.
    // The loop works on local copies (no aliasing between the stages' state
    // and the transfer arrays, so the compiler keeps them in registers) and
    // writes them back at the end, or where it stops.
    const int m = m_, p = p_;
    lanes_.resize(p);
    Lane* __restrict lanes = lanes_.data();
    for (int r = 0; r < p; ++r) {
      const StageState& st = stages_[r];
      const ChunkProgram& prog = *programs_[r];
      lanes[r] = Lane{st.compute_end_s, st.pipe_forward_end_s, st.pipe_backward_end_s,
                      st.busy_s, st.pp_wait_s, prog.forward_s, prog.backward_s,
                      r > 0 ? send_fwd_s_[r - 1] : 0.0, r < p - 1 ? send_bwd_s_[r + 1] : 0.0,
                      send_fwd_s_[r], send_bwd_s_[r],
                      fwd_end_ + static_cast<ptrdiff_t>(r - 1) * m,
                      bwd_end_ + static_cast<ptrdiff_t>(r + 1) * m,
                      fwd_end_ + static_cast<ptrdiff_t>(r) * m, bwd_end_ + static_cast<ptrdiff_t>(r) * m,
                      r < p - 1 ? 2 : 1, r > 0 ? 2 : 1, static_cast<int>(st.next), st.warmup,
                      overlap_buckets_ ? st.last_backward[0] : -1};
    }
    int tasks = 0;
    auto write_back = [&] {
      for (int r = 0; r < p; ++r) {
        StageState& st = stages_[r];
        const Lane& lane = lanes[r];
        st.compute_end_s = lane.compute_end;
        st.pipe_forward_end_s = lane.forward_end;
        st.pipe_backward_end_s = lane.backward_end;
        st.busy_s = lane.busy;
        st.pp_wait_s = lane.pp_wait;
        st.any_pass = st.any_pass || lane.next > 0;
        st.next = static_cast<size_t>(lane.next);
      }
      external_tasks_ += tasks;
    };
    // One pass of stage r and the transfer it sends, as emit_step_fast times
    // them; false when its input transfer is not there yet (never, by the
    // order) or when it is the pass that releases DP buckets, which
    // emit_step_fast then emits.
    auto pass = [&](int r, int k, bool forward, int mb) __attribute__((always_inline)) -> bool {
      Lane& lane = lanes[r];
      if (k != lane.next) return false;  // (never: the order is complete)
      if (k == lane.last_backward) {  // the pass that releases DP buckets
        // emit_step_fast reads and writes only stage r's state (and the
        // transfer arrays, shared): hand it over and take it back.
        StageState& st = stages_[r];
        st.compute_end_s = lane.compute_end;
        st.pipe_forward_end_s = lane.forward_end;
        st.pipe_backward_end_s = lane.backward_end;
        st.busy_s = lane.busy;
        st.pp_wait_s = lane.pp_wait;
        st.next = static_cast<size_t>(k);
        if (!emit_step_fast(r)) return false;
        ++st.next;
        st.any_pass = true;
        lane.forward_end = st.pipe_forward_end_s;
        lane.compute_end = st.compute_end_s;
        lane.backward_end = st.pipe_backward_end_s;
        lane.busy = st.busy_s;
        lane.pp_wait = st.pp_wait_s;
        lane.next = k + 1;
        return true;
      }
      // The end stages read the zero rows (see build()); their sends write
      // rows nobody reads.
      const double transfer_end = forward ? lane.in_forward[mb] : lane.in_backward[mb];
      if (transfer_end < 0) return false;
      const double transfer_s = forward ? lane.in_forward_s : lane.in_backward_s;
      const double duration = forward ? lane.forward_s : lane.backward_s;
      const double start = std::max(lane.compute_end, transfer_end);
      const double end = start + duration;
      const double gap = start - lane.compute_end;
      if (gap > 0 && transfer_end >= start - 1e-15) {
        lane.pp_wait += std::min(gap, transfer_s);
      }
      lane.busy += end - start;
      lane.compute_end = end;
      if (forward) {
        lane.forward_end = std::max(lane.forward_end, end) + lane.out_forward_s;
        lane.out_forward[mb] = lane.forward_end;
        tasks += lane.forward_tasks;
      } else {
        lane.backward_end = std::max(lane.backward_end, end) + lane.out_backward_s;
        lane.out_backward[mb] = lane.backward_end;
        tasks += lane.backward_tasks;
      }
      lane.next = k + 1;
      return true;
    };
    // Warm-up and steady steps: priorities t < 4m + p.
    for (int t = 0; t < 4 * m + p; ++t) {
      // r > (t - 4m + 2p - 2) / 3, r <= t, r of t's parity.
      const int bound = t - 4 * m + 2 * p - 2;
      int lo = bound < 0 ? 0 : bound / 3 + 1;
      if (((t - lo) & 1) != 0) ++lo;
      const int hi = std::min(t, p - 1);
      for (int r = lo; r <= hi; r += 2) {
        const int k = (t - r) >> 1;
        const int w = lanes[r].warmup;
        bool forward = true;
        int mb = k;
        if (k >= w) {
          const int q = k - w;
          forward = (q & 1) == 0;
          mb = forward ? w + (q >> 1) : q >> 1;
        }
        if (!pass(r, k, forward, mb)) {
          write_back();
          return;
        }
      }
    }
    // Cool-down backwards: t >= 4m + p with t - p even; step k = (t - p) / 2
    // - p + 1 + r of micro-batch k - m, while k < 2m.
    for (int t = 4 * m + p; t <= 4 * m + 3 * p; t += 2) {
      const int base = (t - p) / 2 - p + 1;
      const int hi = std::min(p - 1, 2 * m - 1 - base);
      for (int r = 0; r <= hi; ++r) {
        const int k = base + r;
        if (!pass(r, k, false, k - m)) {
          write_back();
          return;
        }
      }
    }
    write_back();
  }

  // One stage's state in run_ordered_1f1b's loop.
  struct Lane {
    double compute_end, forward_end, backward_end, busy, pp_wait;
    double forward_s, backward_s;         // its passes
    double in_forward_s, in_backward_s;   // the transfers it receives
    double out_forward_s, out_backward_s; // the transfers it sends
    // Its rows of the transfer end times (per micro-batch): what it reads, what it writes.
    const double* in_forward;
    const double* in_backward;
    double* out_forward;
    double* out_backward;
    int forward_tasks, backward_tasks;    // a pass, and its send when there is one
    int next, warmup, last_backward;      // last_backward: -1 without overlapped buckets
  };

  void wake(int stage) {
    StageState& st = stages_[stage];
    if (st.queued || st.done) return;
    st.queued = true;
    worklist_.push_back(stage);
  }

  // Step k of a stage (generated for 1F1B, else listed).
  PipelineStep step_at(const StageState& st, size_t k) const {
    if (!st.generated) return st.steps[k];
    const int i = static_cast<int>(k), w = st.warmup;
    if (i < w) return {true, 0, i};
    const int steady = 2 * (m_ - w);
    if (i < w + steady) {
      const int q = i - w;
      return (q & 1) != 0 ? PipelineStep{false, 0, q >> 1} : PipelineStep{true, 0, w + (q >> 1)};
    }
    return {false, 0, m_ - w + (i - w - steady)};
  }

  // emit_step on the fast path: the pass and its pipeline transfer are
  // timed here directly, with the same arithmetic as the graph's replay
  // (start = max(stream's previous end, the transfer's end), end = start +
  // duration), so results are bit-identical to the reference engine; only
  // the data-parallel buckets a pass releases become graph tasks.
  bool emit_step_fast(int r) {
    StageState& state = stages_[r];
    const size_t k = state.next;
    const PipelineStep st = step_at(state, k);
    const int chunks = p_ * v_;
    const int j = st.virtual_chunk * p_ + r;
    const bool weight = !st.forward && st.backward == BackwardKind::kWeight;
    const bool input = !st.forward && st.backward == BackwardKind::kInput;
    double transfer_end = -1.0, transfer_s = 0.0;
    if (st.forward) {
      if (j > 0) {
        transfer_end = fwd_end_[idx(j - 1, st.micro_batch)];
        if (transfer_end < 0) return false;
        transfer_s = send_fwd_s_[j - 1];
      }
    } else if (!weight && j < chunks - 1) {
      transfer_end = bwd_end_[idx(j + 1, st.micro_batch)];
      if (transfer_end < 0) return false;
      transfer_s = send_bwd_s_[j + 1];
    }
    const ChunkProgram& prog = *programs_[j];
    const double start = std::max(state.compute_end_s, transfer_end);
    double end;
    if (!overlap_buckets_ || st.forward ||
        static_cast<int>(k) != state.last_backward[st.virtual_chunk]) {
      const double total_s = st.forward ? prog.forward_s
                             : weight   ? prog.backward_weight_s
                             : input    ? prog.backward_input_s
                                        : prog.backward_s;
      end = start + checked(r, total_s, st, j);
      ++external_tasks_;
    } else {
      end = emit_bucketed_pass(r, st, j, start);
    }
    // The compute stream's idle time, as pass_times() computes it from segments.
    const double gap = start - state.compute_end_s;
    if (gap > 0 && transfer_end >= 0 && transfer_end >= start - 1e-15) {
      state.pp_wait_s += std::min(gap, transfer_s);
    }
    state.busy_s += end - start;
    state.compute_end_s = end;
    state.any_pass = true;
    if (st.forward) {
      if (j < chunks - 1) {
        const double s = std::max(state.pipe_forward_end_s, end);
        state.pipe_forward_end_s = s + checked_transfer(r, send_fwd_s_[j]);
        fwd_end_[idx(j, st.micro_batch)] = state.pipe_forward_end_s;
        ++external_tasks_;
        wake((j + 1) % p_);
      }
    } else if (!weight && j > 0) {
      const double s = std::max(state.pipe_backward_end_s, end);
      state.pipe_backward_end_s = s + checked_transfer(r, send_bwd_s_[j]);
      bwd_end_[idx(j, st.micro_batch)] = state.pipe_backward_end_s;
      ++external_tasks_;
      wake((j - 1) % p_);
    }
    return true;
  }

  // The pass that releases a chunk's gradients with overlapped reduction: its
  // pieces (cut after the ops that fill a bucket, as emit_pass cuts them)
  // one after another from `start`, and a data-parallel task per bucket after
  // its piece. Returns the pass's end.
  double emit_bucketed_pass(int r, const PipelineStep& st, int j, double start) {
    StageState& state = stages_[r];
    const ChunkProgram& prog = *programs_[j];
    const bool weight = st.backward == BackwardKind::kWeight;
    const bool input = st.backward == BackwardKind::kInput;
    const std::vector<LoweredOp>& ops = weight  ? prog.backward_weight
                                        : input ? prog.backward_input
                                                : prog.backward;
    const BucketedPass& plan = bucketed_pass(ops);
    double t = start;
    for (const BucketedPass::Piece& piece : plan.pieces) {
      t += checked(r, piece.duration_s, st, j);
      ++external_tasks_;
      const int b = piece.bucket;
      if (b < 0) continue;
      if (dense_dp() && plan.sizes[b] > 0) {
        const TaskId task = add_dp(r, plan.dense_s[b], Label{dp_label(grad_kind()), -1, j, b});
        graph_.add_dependency_on_time(t, task);
        state.dp_tasks.push_back(task);
      }
      if (expert_dp() && plan.expert_sizes[b] > 0) {
        const TaskId task =
            add_dp(r, plan.expert_s[b], Label{expert_dp_label(grad_kind()), -1, j, b});
        graph_.add_dependency_on_time(t, task);
        state.dp_tasks.push_back(task);
      }
    }
    return t;
  }

  // A backward pass's bucket cuts and its buckets' collective times, computed
  // once per lowered pass (chunks with the same program share them).
  struct BucketedPass {
    const std::vector<LoweredOp>* ops = nullptr;
    std::vector<bool> split;
    std::vector<double> sizes, expert_sizes;  // per cut (bucket_cuts)
    std::vector<double> dense_s, expert_s;    // their collective times (0 when empty)
    // The pass as it runs: pieces of ops, each ending at a cut (its bucket
    // number) or at the pass's end (-1 when that is not a cut).
    struct Piece {
      double duration_s = 0;
      int bucket = -1;
    };
    std::vector<Piece> pieces;
  };
  const BucketedPass& bucketed_pass(const std::vector<LoweredOp>& ops) {
    for (const BucketedPass& b : bucketed_) {
      if (b.ops == &ops) return b;
    }
    BucketedPass b;
    b.ops = &ops;
    b.split = bucket_cuts(ops, &b.sizes, &b.expert_sizes);
    for (size_t i = 0; i < b.sizes.size(); ++i) {
      b.dense_s.push_back(dense_dp() && b.sizes[i] > 0
                              ? dp_time(grad_kind(), b.sizes[i], grad_group())
                              : 0.0);
      b.expert_s.push_back(expert_dp() && b.expert_sizes[i] > 0
                               ? dp_time(grad_kind(), b.expert_sizes[i], placement_.expert_data)
                               : 0.0);
    }
    // Summed as emit_pass sums a piece's ops.
    double acc = 0;
    int bucket = 0;
    for (size_t q = 0; q < ops.size(); ++q) {
      acc += ops[q].duration_s;
      if (q + 1 != ops.size() && !b.split[q]) continue;
      b.pieces.push_back({acc, b.split[q] ? bucket++ : -1});
      acc = 0;
    }
    bucketed_.push_back(std::move(b));
    return bucketed_.back();
  }

  // A pass duration on the fast path, checked as add() checks it (the first
  // bad one is the build's error, then 0).
  double checked(int stage, double duration, const PipelineStep& st, int chunk) {
    if (duration >= 0 && std::isfinite(duration)) return duration;
    const bool weight = !st.forward && st.backward == BackwardKind::kWeight;
    record_bad_duration(stage, duration,
                        Label{st.forward ? "F" : (weight ? "W" : "B"), st.micro_batch, chunk});
    return 0;
  }
  double checked_transfer(int stage, double duration) {
    if (duration >= 0 && std::isfinite(duration)) return duration;
    record_bad_duration(stage, duration, Label{"pipeline transfer"});
    return 0;
  }

  // After the stage's last pass: the remaining gradient reductions, the
  // optimizer step and (distributed optimizer) the parameter all-gather.
  void finish_stage(int r) {
    StageState& state = stages_[r];
    const TaskId previous = state.previous;
    // `t` waits for the stage's last pass (the fast path keeps it outside the graph).
    auto after_passes = [&](TaskId t) {
      if (fast_) {
        if (state.any_pass) graph_.add_dependency_on_time(state.compute_end_s, t);
      } else if (previous >= 0) {
        graph_.add_dependency(previous, t);
      }
    };
    std::vector<TaskId>& dp_tasks = state.dp_tasks;
    const bool has_dp = dense_dp();  // d * cp ranks share the gradients
    const int stage = plan_.sharding_stage();
    // Without overlap: reduce every chunk's gradients after the stage's last pass.
    if (!plan_.overlap_grad_reduce && stage <= 1) {
      for (int c = 0; c < v_; ++c) {
        const ChunkProgram& prog = *programs_[c * p_ + r];
        for (double bytes : has_dp ? bucket_list(prog.grad_bytes) : std::vector<double>()) {
          const TaskId t = add_dp(r, dp_time(grad_kind(), bytes, grad_group()),
                                  Label{dp_label(grad_kind()), -1, c * p_ + r});
          after_passes(t);
          dp_tasks.push_back(t);
        }
        if (!expert_dp() || prog.expert_grad_bytes <= 0) continue;
        for (double bytes : bucket_list(prog.expert_grad_bytes)) {
          const TaskId t = add_dp(r, dp_time(grad_kind(), bytes, placement_.expert_data),
                                  Label{expert_dp_label(grad_kind()), -1, c * p_ + r});
          after_passes(t);
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
      after_passes(t);
      dp_tasks.push_back(t);
    }
    // Hybrid sharding: all-reduce this rank's 1/S gradient shard across the
    // d/S replicas, once per step after the shard's reduction.
    double params = 0, grad_bytes = 0, expert_params = 0;
    for (int c = 0; c < v_; ++c) {
      params += programs_[c * p_ + r]->parameters;
      grad_bytes += programs_[c * p_ + r]->grad_bytes;
      expert_params += programs_[c * p_ + r]->expert_parameters;
    }
    // Routed experts are sharded over the whole expert-data group (no hybrid
    // replicas); the rest as before.
    const double dense_params = params - expert_params;
    const int edp = placement_.expert_data.size;
    const int S = plan_.shard_ranks();
    if (stage >= 1 && placement_.replica.size > 1) {
      const TaskId t =
          add_dp(r, dp_time(CollectiveKind::kAllReduce, grad_bytes / S, placement_.replica),
                 Label{"dp all_reduce gradient shard across replicas"});
      after_passes(t);
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
    opt.precision = plan_.precision == Precision::kFp8 ? Precision::kBf16 : plan_.precision;
    // One launch after the pass: at least the host's launch interval.
    double opt_s = std::max(cost_.kernel_time_s(opt), cost_.launch_interval_s());
    if (plan_.precision == Precision::kFp8 && stage < 3) {
      // The updated layer weights cast to their cached fp8 copies (lowering.h).
      double layer_params = 0;
      for (int c = 0; c < v_; ++c) layer_params += programs_[c * p_ + r]->layer_parameters;
      KernelDesc cast;
      cast.kind = KernelKind::kFp8CastTranspose;
      cast.pass = Pass::kForward;
      cast.precision = Precision::kFp8;
      cast.bytes = layer_params * fp8_cast_bytes_per_element(plan_.fp8_recipe);
      opt_s += std::max(cost_.kernel_time_s(cast), cost_.launch_interval_s());
    }
    const TaskId o = add(r, StreamKind::kCompute, opt_s, Label{"optimizer step"});
    after_passes(o);
    for (TaskId t : dp_tasks) graph_.add_dependency(t, o);
    optimizer_task_[r] = o;
    stage_end_task_[r] = o;
    // Stages 1 and 2: gather the updated bf16 parameters over the shard group
    // (stage 3 gathers per layer in the passes). With overlap_param_gather it
    // runs under the next iteration's first forward pass of each of the
    // stage's chunks: only what does not fit is exposed (the steady state of
    // consecutive iterations, counted at the end of this one), plus the SM
    // contention of the hidden part.
    const bool gather_experts = expert_dp() && expert_params > 0;
    if ((stage == 1 || stage == 2) && ((has_dp && S > 1) || gather_experts)) {
      double full = model_.is_moe()
                        ? dp_time(CollectiveKind::kAllGather, dense_params * 2.0, placement_.shard)
                        : dp_time(CollectiveKind::kAllGather, params * 2.0, placement_.shard);
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

  // A data-parallel task whose full duration counts as issued DP communication.
  TaskId add_dp(int stage, double duration, const Label& label) {
    dp_issued_s_[stage] += duration;
    return add(stage, StreamKind::kDataComm, duration, label);
  }

  // Bucket boundaries in a chunk's backward ops: cut after the op at which
  // the accumulated ready gradients (dense or routed experts', kept apart as
  // Megatron-Core keeps expert buffers) reach the bucket size, and at the
  // end. Each cut flushes both: `sizes` and `expert_sizes` get one entry per
  // cut (0 when nothing of that kind was pending).
  std::vector<bool> bucket_cuts(const std::vector<LoweredOp>& ops, std::vector<double>* sizes,
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

  // `bytes` in buckets of the plan's size, the last one partial. (Counted,
  // not subtracted in a loop: bytes - bucket == bytes for a tiny bucket.)
  // max_tasks() bounds the count.
  std::vector<double> bucket_list(double bytes) const {
    const double bucket = static_cast<double>(plan_.grad_bucket_bytes);
    if (bucket <= 0 || bytes <= bucket) return {bytes};
    const size_t full = static_cast<size_t>(std::floor(bytes / bucket));
    std::vector<double> out(full, bucket);
    const double rest = bytes - static_cast<double>(full) * bucket;
    if (rest > 0) out.push_back(rest);
    return out;
  }

  static const char* dp_label(CollectiveKind kind) {
    return kind == CollectiveKind::kReduceScatter ? "dp reduce_scatter gradients"
                                                  : "dp all_reduce gradients";
  }
  static const char* expert_dp_label(CollectiveKind kind) {
    return kind == CollectiveKind::kReduceScatter ? "edp reduce_scatter expert gradients"
                                                  : "edp all_reduce expert gradients";
  }

  double dp_time(CollectiveKind kind, double bytes, const CommGroup& group) const {
    CollectiveDesc c;
    c.kind = kind;
    c.bytes = bytes;
    c.group = group;
    return cost_.collective_time_s(c);
  }

  // Pipeline transfer from `stage` to its neighbour across boundary `stage`.
  double transfer_s(const ChunkProgram& prog, int boundary) const {
    CollectiveDesc c;
    c.kind = CollectiveKind::kSendRecv;
    c.bytes = prog.activation_send_bytes;
    c.group = {2, placement_.pipe_crosses_node[boundary] ? 1 : 2};
    return cost_.collective_time_s(c);
  }

  // Mixed-precision Adam: read fp32 gradient, master weight and two moments,
  // write master and moments back, write the bf16/fp16 weight.
  static constexpr double kAdamBytesPerParameter = 4 * 4 + 3 * 4 + 2;

  const Model& model_;
  const Plan& plan_;
  const Placement& placement_;
  const CostModel& cost_;
  const std::vector<const ChunkProgram*>& programs_;  // by model chunk
  const SimOptions& options_;
  int p_, v_, m_;
  // The workspace's buffers (see Workspace).
  TaskGraph& graph_;
  std::vector<double>& start_;
  std::vector<StageState>& stages_;
  std::vector<TaskId>& send_fwd_;
  std::vector<TaskId>& send_bwd_;
  std::vector<double>& send_fwd_end_;
  std::vector<double>& send_bwd_end_;
  double* fwd_end_ = nullptr;  // row 0 of send_fwd_end_ (row -1: the first chunk's input, 0s)
  double* bwd_end_ = nullptr;  // row 0 of send_bwd_end_ (row chunks: the last chunk's input, 0s)
  // Passes and pipeline transfers computed directly, outside the graph
  // (collapsed passes, no timeline, not the reference engine).
  bool fast_;
  int external_tasks_ = 0;  // tasks the fast path kept outside the graph
  bool overlap_buckets_ = false;  // DP buckets fire inside a chunk's last backward
  std::vector<int> worklist_;     // fast path: stages that may progress
  std::vector<Lane> lanes_;       // fast path, 1F1B
  std::deque<BucketedPass> bucketed_;  // fast path: per lowered pass (stable addresses)
  std::vector<double> send_fwd_s_, send_bwd_s_;  // per chunk
  std::vector<TaskId> stage_end_task_, optimizer_task_;
  std::vector<double> dp_issued_s_, post_gather_hidden_s_, post_gather_slowdown_s_;
  std::vector<std::string> task_name_;
  Status duration_error_;  // the first bad duration add() met
};

}  // namespace

Result<StepReport> simulate(const Model& model, const Plan& plan, const Cluster& cluster,
                            const SimOptions& options) {
  LLMPLAN_RETURN_IF_ERROR(validate(model, plan));
  LLMPLAN_RETURN_IF_ERROR(validate(cluster));
  LLMPLAN_RETURN_IF_ERROR(check_precision(plan, cluster.gpu));
  if (cluster.max_gpus() > 0 && plan.world_size() > cluster.max_gpus()) {
    return Status::invalid_argument(
        "plan needs " + std::to_string(plan.world_size()) + " GPUs (tp*cp*pp*dp) but cluster " +
        cluster.name + " has " + std::to_string(cluster.max_gpus()));
  }
  Roofline roofline(cluster);
  const CostModel& cost = options.cost_model ? *options.cost_model : roofline;
  const Placement placement = place(plan, cluster);
  const int p = plan.pipeline_parallel, v = plan.virtual_stages;
  // Chunks with the same role (first / middle / last) and layer count run
  // the same kernels: lower each kind once.
  std::vector<ChunkProgram> unique;
  unique.reserve(4);
  std::vector<const ChunkProgram*> programs(p * v, nullptr);
  std::vector<int> unique_of(p * v, -1);
  // With MoE or windowed layers the chunks' layers must also be of the same
  // kinds (MoE or dense, attention span), layer by layer.
  const bool mixed_layers = model.is_moe() || model.sliding_window > 0;
  std::vector<int> first_layer(p * v + 1, 0);
  for (int j = 0; j < p * v; ++j)
    first_layer[j + 1] = first_layer[j] + layers_in_chunk(model, plan, j);
  auto same_kinds = [&](int j, int k) {
    if (!mixed_layers) return true;
    for (int l = 0; l < first_layer[j + 1] - first_layer[j]; ++l) {
      const int a = first_layer[j] + l, b = first_layer[k] + l;
      if (model.is_moe_layer(a) != model.is_moe_layer(b) ||
          model.attention_span(a) != model.attention_span(b)) {
        return false;
      }
    }
    return true;
  };
  for (int j = 0; j < p * v; ++j) {
    const bool middle = j > 0 && j < p * v - 1;
    const int layers = layers_in_chunk(model, plan, j);
    for (size_t u = 0; middle && u < unique.size() && unique_of[j] < 0; ++u) {
      const int k = unique[u].chunk;
      if (k > 0 && k < p * v - 1 && unique[u].layers == layers && same_kinds(j, k)) {
        unique_of[j] = static_cast<int>(u);
      }
    }
    if (unique_of[j] < 0) {
      unique_of[j] = static_cast<int>(unique.size());
      unique.push_back(lower_chunk(model, plan, placement, cost, j));
    }
  }
  for (int j = 0; j < p * v; ++j) programs[j] = &unique[unique_of[j]];
  // A cost model fed absurd numbers (a profile or constants file) can give
  // durations that are not finite: name the first such kernel.
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

  Workspace& workspace = thread_workspace();
  GraphBuilder builder(model, plan, placement, cost, programs, options, &workspace);
  LLMPLAN_RETURN_IF_ERROR(builder.build());

  StepReport report;
  report.num_gpus = plan.world_size();
  report.total_params = static_cast<double>(model.parameter_count());
  report.active_params = static_cast<double>(model.active_parameter_count());
  report.num_tasks = builder.num_tasks();
  report.cost_model = cost.describe();
  const int m = plan.num_micro_batches();
  std::vector<double> stage_params(p, 0.0);
  double device_flops_sum = 0;  // hardware FLOPs summed over one device per stage
  report.stages.resize(p);
  std::vector<std::pair<const ChunkProgram*, StageBreakdown>> chunk_sums;
  for (int r = 0; r < p; ++r) {
    StageReport& sr = report.stages[r];
    sr.stage = r;
    StageBreakdown& b = sr.time;
    // With one chunk per stage, stages running the same program add the
    // same sums to a zero breakdown: compute them once per program (the
    // hardware FLOPs, summed across stages, still op by op).
    const ChunkProgram* only = v == 1 ? programs[r] : nullptr;
    const StageBreakdown* known = nullptr;
    for (const auto& [prog, sums] : chunk_sums) {
      if (prog == only) known = &sums;
    }
    for (int c = 0; c < v; ++c) {
      const ChunkProgram& prog = *programs[c * p + r];
      sr.layers += prog.layers;
      stage_params[r] += prog.parameters;
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
          for (const LoweredOp& op : *ops) device_flops_sum += op.flops * m;
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
          }
          b.overlap_slowdown_s += op.slowdown_s * m;
          if (op.expert) b.expert_compute_s += total;
          device_flops_sum += op.flops * m;
        }
      }
      b.tp_comm_hidden_s += prog.tp_hidden_s * m;
      b.fsdp_hidden_s += prog.fsdp_hidden_s * m;
      b.cp_comm_hidden_s += prog.cp_hidden_s * m;
      b.moe_a2a_hidden_s += prog.moe_a2a_hidden_s * m;
    }
    if (only != nullptr && known == nullptr) chunk_sums.emplace_back(only, b);
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
  const std::vector<MemoryBreakdown> memory =
      stage_memory(model, plan, stage_params, options.reserved_bytes);
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
  const double peak = plan.precision == Precision::kFp16 ? cluster.gpu.peak_fp16_flops
                                                        : cluster.gpu.peak_bf16_flops;
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
  if (!options.cost_model) {
    report.caveats = roofline_caveats(model, plan, cluster.gpu, report.mfu);
  }

  if (options.keep_timeline) {
    const TaskGraph& g = builder.graph();
    report.timeline.reserve(g.num_tasks());
    for (TaskId t = 0; t < g.num_tasks(); ++t) {
      TimelineEvent e;
      e.stage = g.stream(t) / kStreamsPerDevice;
      e.stream = g.stream(t) % kStreamsPerDevice;
      e.start_s = builder.start()[t];
      e.end_s = builder.end(t);
      e.name = builder.task_name()[t];
      report.timeline.push_back(std::move(e));
    }
  }
  workspace.graph.trim(kKeptWorkspaceTasks);
  if (workspace.start.capacity() > kKeptWorkspaceTasks) workspace.start = {};
  return report;
}

}  // namespace llmplan::simulator

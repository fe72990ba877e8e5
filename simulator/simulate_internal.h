// Internal to the simulator's engine (simulate*.cc): the builder that turns
// one iteration's lowered chunk programs into the engine's task graph and
// times it. Not a public interface: simulate.h is the manual.
//
// Two paths build the same iteration and give bit-identical results
// (simulate_fast_test.cc checks it on hundreds of plans):
//  - the reference path (simulate_reference.cc): every pass, transfer and
//    collective is a task of the TaskGraph (with SimOptions::reference_engine
//    every edge is stored and start times are computed in a separate pass),
//    and the only path that can keep a timeline or run every kernel as a
//    task (--trace, --task-level);
//  - the fast path (simulate_fast.cc): collapsed passes and pipeline
//    transfers are timed directly, with the same arithmetic as the graph's
//    replay, and only the data-parallel collectives become graph tasks.
// What both share -- the build's set-up, the tail of each stage (gradient
// reduction, optimizer step, parameter gather) and the bucket arithmetic --
// is in simulate_graph.cc.
#ifndef LLMPLAN_SIMULATOR_SIMULATE_INTERNAL_H_
#define LLMPLAN_SIMULATOR_SIMULATE_INTERNAL_H_

#include <cmath>
#include <cstddef>
#include <deque>
#include <string>
#include <vector>

#include "simulator/cost_model.h"
#include "simulator/engine.h"
#include "simulator/lowering.h"
#include "simulator/model.h"
#include "simulator/plan.h"
#include "simulator/schedule.h"
#include "simulator/simulate.h"
#include "base/status.h"

namespace llmplan::simulator::simulate_internal {

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
  // Fast path, 1F1B and zb-h1: the steps are computed from their index
  // (step_at) instead of being listed: 1F1B's `warmup` forwards, m - warmup
  // (F, B) pairs, warmup backwards, as stage_schedule() lists them; zb-h1's
  // from zb_h1_step (schedule.h).
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

// Builds the task graph of one iteration and keeps what accounting needs.
//
// Passes are emitted as a wavefront across stages: a stage emits its next
// pass only once the pipeline transfer that pass waits for exists, so every
// dependency points to an earlier task (the engine's requirement). One
// builder per simulation, on one thread; it uses the workspace's buffers.
class GraphBuilder {
 public:
  GraphBuilder(const Model& model, const Plan& plan, const Placement& placement,
               const CostModel& cost, const std::vector<const ChunkProgram*>& programs,
               const SimOptions& options, Workspace* workspace);

  // An upper bound on the tasks build() adds (computed in double, so it
  // cannot overflow): per pass one task (or one per op at task level) and a
  // pipeline send; per chunk the data-parallel buckets (at most one per
  // backward op when they overlap, grad_bytes / bucket size otherwise); per
  // stage the embedding all-reduce, hybrid all-reduce, optimizer and
  // parameter all-gather.
  double max_tasks() const;

  // Builds and times the iteration, on the fast or the reference path.
  // InvalidArgument when the graph would be too large or the cost model
  // gave a duration that is negative or not finite.
  Status build();

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
  PassTimes pass_times(int r) const;
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
  void record_bad_duration(int stage, double duration, const Label& label);

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

  // After the stage's last pass: the remaining gradient reductions, the
  // optimizer step and (distributed optimizer) the parameter all-gather.
  void finish_stage(int r);
  // finish_stage's parts. `t` waits for stage r's last pass (the fast path
  // keeps it outside the graph).
  void after_passes(int r, TaskId t);
  // Without overlap, every chunk's gradient reduction after the last pass;
  // the tied embeddings' all-reduce (into StageState::dp_tasks).
  void reduce_gradients_after_passes(int r);
  // Stage r's parameters summed over its chunks (routed experts among them)
  // and its gradient bytes.
  struct StageSums {
    double params = 0, grad_bytes = 0, expert_params = 0;
  };
  // Hybrid sharding's replica all-reduce and the optimizer step (returned).
  TaskId optimizer_step(int r, const StageSums& sums);
  // Stages 1 and 2: the updated parameters' all-gather after `optimizer`.
  void gather_parameters(int r, TaskId optimizer, const StageSums& sums);
  // A data-parallel task whose full duration counts as issued DP communication.
  TaskId add_dp(int stage, double duration, const Label& label);
  // Bucket boundaries in a chunk's backward ops: cut after the op at which
  // the accumulated ready gradients (dense or routed experts', kept apart as
  // Megatron-Core keeps expert buffers) reach the bucket size, and at the
  // end. Each cut flushes both: `sizes` and `expert_sizes` get one entry per
  // cut (0 when nothing of that kind was pending).
  std::vector<bool> bucket_cuts(const std::vector<LoweredOp>& ops, std::vector<double>* sizes,
                                std::vector<double>* expert_sizes) const;
  // `bytes` in buckets of the plan's size, the last one partial. (Counted,
  // not subtracted in a loop: bytes - bucket == bytes for a tiny bucket.)
  // max_tasks() bounds the count.
  std::vector<double> bucket_list(double bytes) const;
  static const char* dp_label(CollectiveKind kind) {
    return kind == CollectiveKind::kReduceScatter ? "dp reduce_scatter gradients"
                                                  : "dp all_reduce gradients";
  }
  static const char* expert_dp_label(CollectiveKind kind) {
    return kind == CollectiveKind::kReduceScatter ? "edp reduce_scatter expert gradients"
                                                  : "edp all_reduce expert gradients";
  }
  double dp_time(CollectiveKind kind, double bytes, const CommGroup& group) const;
  // Pipeline transfer from `stage` to its neighbour across boundary `stage`.
  double transfer_s(const ChunkProgram& prog, int boundary) const;

  // The reference path (simulate_reference.cc; the inline ones are used
  // only there). Every stage emits what it can, round after round.
  Status run_reference();
  // Adds the first task of a pass: after the stage's previous work and, if
  // any, the pipeline transfer it consumes.
  inline TaskId add_first(int stage, StreamKind s, double duration, const Label& label,
                          TaskId previous, TaskId transfer);
  // Emits one micro-batch pass. Fills op_task (the task each op ran in) when
  // given; splits collapsed passes after the ops marked in split_after.
  inline Segment emit_pass(int stage, const std::vector<LoweredOp>& ops, double total_s,
                           const Label& label, TaskId previous, TaskId transfer,
                           std::vector<TaskId>* op_task, const std::vector<bool>* split_after);
  // Emits the next pass of stage r, or returns false if the transfer it
  // waits for has not been emitted yet.
  inline bool emit_step(int r);

  // The fast path (simulate_fast.cc; the inline ones are used only there).
  // The wavefront: a work list of stages that may progress. A stage runs
  // its steps until one waits for a transfer not yet emitted; the stage that
  // emits that transfer puts it back on the list. Which stage runs first
  // does not change any time (each stage's streams are its own, in its own
  // step order), only how little work is wasted on stages that cannot
  // progress.
  Status run_fast();
  // 1F1B and zb-h1 with m >= p: every step but the last round's in an
  // order in which its transfer is already emitted (see the definition).
  inline void run_ordered_1f1b();
  // run_ordered_1f1b's set-up and write-back around its loop: whether every
  // pass and transfer time is valid (else the general steps report the bad
  // one), the lanes loaded from the stages, and the stages' state (and the
  // task count) written back from them.
  inline bool ordered_1f1b_times_valid(bool zb) const;
  inline void load_lanes(bool zb);
  inline void store_lanes();
  // Interleaved and GPipe (steps listed): sweeps over the stages that time
  // every step whose transfer is emitted (see the definition).
  void run_listed_sweeps();
  // One stage's state in run_ordered_1f1b's loop.
  struct Lane {
    double compute_end, forward_end, backward_end, busy, pp_wait;
    double forward_s, backward_s;         // its passes (zb-h1: backward_s is B's)
    double weight_s;                      // zb-h1: its W pass
    double in_forward_s, in_backward_s;   // the transfers it receives
    double out_forward_s, out_backward_s; // the transfers it sends
    // Its rows of the transfer end times (per micro-batch): what it reads, what it writes.
    const double* in_forward;
    const double* in_backward;
    double* out_forward;
    double* out_backward;
    int forward_tasks, backward_tasks;    // a pass, and its send when there is one
    int next, warmup;                     // steps done (W's included); warm-up forwards
    // zb-h1: the lag L of W steps (schedule.h): a W follows B(q) for q >= L,
    // the rest end the stage. 1F1B: m (no W).
    int lag;
  };
  inline void wake(int stage);
  // Step k of a stage (generated for 1F1B, else listed).
  inline PipelineStep step_at(const StageState& st, size_t k) const;
  // emit_step on the fast path: the pass and its pipeline transfer are
  // timed here directly, with the same arithmetic as the graph's replay
  // (start = max(stream's previous end, the transfer's end), end = start +
  // duration), so results are bit-identical to the reference engine; only
  // the data-parallel buckets a pass releases become graph tasks.
  inline bool emit_step_fast(int r);
  // The pass that releases a chunk's gradients with overlapped reduction: its
  // pieces (cut after the ops that fill a bucket, as emit_pass cuts them)
  // one after another from `start`, and a data-parallel task per bucket after
  // its piece. Returns the pass's end.
  inline double emit_bucketed_pass(int r, const PipelineStep& st, int j, double start);
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
  inline const BucketedPass& bucketed_pass(const std::vector<LoweredOp>& ops);
  // A pass duration on the fast path, checked as add() checks it (the first
  // bad one is the build's error, then 0).
  inline double checked(int stage, double duration, const PipelineStep& st, int chunk);
  inline double checked_transfer(int stage, double duration);

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

}  // namespace llmplan::simulator::simulate_internal

#endif  // LLMPLAN_SIMULATOR_SIMULATE_INTERNAL_H_

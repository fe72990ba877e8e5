#include <cmath>
#include <vector>

#include "simulator/simulate_internal.h"

namespace llmplan::simulator::simulate_internal {

TaskId GraphBuilder::add_first(int stage, StreamKind s, double duration, const Label& label,
                               TaskId previous, TaskId transfer) {
  const TaskId t = add(stage, s, duration, label);
  if (previous >= 0) graph_.add_dependency(previous, t);
  if (transfer >= 0) graph_.add_dependency(transfer, t);
  return t;
}

Segment GraphBuilder::emit_pass(int stage, const std::vector<LoweredOp>& ops, double total_s,
                                const Label& label, TaskId previous, TaskId transfer,
                                std::vector<TaskId>* op_task,
                                const std::vector<bool>* split_after) {
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

bool GraphBuilder::emit_step(int r) {
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
  // Stages 2 and 3 reduce-scatter every micro-batch inside the passes (lowering/sharding.h).
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

Status GraphBuilder::run_reference() {
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
  return Status();
}

}  // namespace llmplan::simulator::simulate_internal

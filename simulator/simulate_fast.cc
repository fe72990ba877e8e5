#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>

#include "simulator/simulate_internal.h"

namespace llmplan::simulator::simulate_internal {

Status GraphBuilder::run_fast() {
  // 1F1B or zb-h1 with a full pipeline: a fixed order in which every step's
  // transfer is already emitted (see run_ordered_1f1b).
  if ((plan_.schedule == Schedule::kOneFOneB || plan_.schedule == Schedule::kZbH1) && v_ == 1 &&
      m_ >= p_) {
    run_ordered_1f1b();
  }
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
//
// zb-h1 runs its F and B steps in 1F1B's order (schedule.h: without its W
// steps a zb-h1 stage is a 1F1B stage), so the same priorities hold; a W
// step needs nothing from other stages, so each runs right after the step
// it follows on its stage: after B(q) for q >= L, and the L pending ones
// after the last B.
void GraphBuilder::run_ordered_1f1b() {
  // Pass and transfer times per chunk (v = 1: chunk = stage); the lean
  // loop below needs them all valid, else the general step reports the
  // bad one exactly as the reference engine does.
  auto good = [](double d) { return d >= 0 && std::isfinite(d); };
  const bool zb = plan_.schedule == Schedule::kZbH1;
  for (int r = 0; r < p_; ++r) {
    const ChunkProgram& prog = *programs_[r];
    if (!good(prog.forward_s) || !good(send_fwd_s_[r]) || !good(send_bwd_s_[r])) return;
    if (zb ? !good(prog.backward_input_s) || !good(prog.backward_weight_s)
           : !good(prog.backward_s)) {
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
                    st.busy_s, st.pp_wait_s, prog.forward_s,
                    zb ? prog.backward_input_s : prog.backward_s,
                    zb ? prog.backward_weight_s : 0.0,
                    r > 0 ? send_fwd_s_[r - 1] : 0.0, r < p - 1 ? send_bwd_s_[r + 1] : 0.0,
                    send_fwd_s_[r], send_bwd_s_[r],
                    fwd_end_ + static_cast<ptrdiff_t>(r - 1) * m,
                    bwd_end_ + static_cast<ptrdiff_t>(r + 1) * m,
                    fwd_end_ + static_cast<ptrdiff_t>(r) * m,
                    bwd_end_ + static_cast<ptrdiff_t>(r) * m,
                    r < p - 1 ? 2 : 1, r > 0 ? 2 : 1, static_cast<int>(st.next), st.warmup,
                    overlap_buckets_ ? st.last_backward[0] : -1, static_cast<int>(st.next),
                    zb ? std::min(r, m - st.warmup) : 0};
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
  // The pass that releases DP buckets, emitted by emit_step_fast: it reads
  // and writes only stage r's state (and the transfer arrays, shared), so
  // hand it over and take it back.
  auto hand_over = [&](int r) -> bool {
    Lane& lane = lanes[r];
    StageState& st = stages_[r];
    st.compute_end_s = lane.compute_end;
    st.pipe_forward_end_s = lane.forward_end;
    st.pipe_backward_end_s = lane.backward_end;
    st.busy_s = lane.busy;
    st.pp_wait_s = lane.pp_wait;
    st.next = static_cast<size_t>(lane.next);
    if (!emit_step_fast(r)) return false;
    ++st.next;
    st.any_pass = true;
    lane.forward_end = st.pipe_forward_end_s;
    lane.compute_end = st.compute_end_s;
    lane.backward_end = st.pipe_backward_end_s;
    lane.busy = st.busy_s;
    lane.pp_wait = st.pp_wait_s;
    ++lane.next;
    return true;
  };
  // zb-h1: stage r's next step, a W, as emit_step_fast times it (after the
  // compute stream's previous pass; nothing sent).
  auto weight = [&](int r) __attribute__((always_inline)) -> bool {
    Lane& lane = lanes[r];
    if (lane.next == lane.last_backward) return hand_over(r);
    const double start = lane.compute_end;
    const double end = start + lane.weight_s;
    lane.busy += end - start;
    lane.compute_end = end;
    ++tasks;
    ++lane.next;
    return true;
  };
  // One pass of stage r and the transfer it sends, as emit_step_fast times
  // them; false when its input transfer is not there yet (never, by the
  // order) or when it is the pass that releases DP buckets, which
  // emit_step_fast then emits. k is the step's index in 1F1B's order (in
  // zb-h1's: without the W steps).
  auto pass = [&](int r, int k, bool forward, int mb) __attribute__((always_inline)) -> bool {
    Lane& lane = lanes[r];
    if (k != lane.forward_backward_next) return false;  // (never: the order is complete)
    ++lane.forward_backward_next;
    if (lane.next == lane.last_backward) return hand_over(r);
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
    ++lane.next;
    if (zb && !forward) {
      // The W after B(mb), and after the last B the pending ones.
      if (mb >= lane.lag && !weight(r)) return false;
      if (mb == m - 1) {
        while (lane.next < 3 * m) {
          if (!weight(r)) return false;
        }
      }
    }
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

void GraphBuilder::wake(int stage) {
  StageState& st = stages_[stage];
  if (st.queued || st.done) return;
  st.queued = true;
  worklist_.push_back(stage);
}

PipelineStep GraphBuilder::step_at(const StageState& st, size_t k) const {
  if (!st.generated) return st.steps[k];
  if (plan_.schedule == Schedule::kZbH1) {
    return zb_h1_step(p_, m_, static_cast<int>(&st - stages_.data()), static_cast<int>(k));
  }
  const int i = static_cast<int>(k), w = st.warmup;
  if (i < w) return {true, 0, i};
  const int steady = 2 * (m_ - w);
  if (i < w + steady) {
    const int q = i - w;
    return (q & 1) != 0 ? PipelineStep{false, 0, q >> 1} : PipelineStep{true, 0, w + (q >> 1)};
  }
  return {false, 0, m_ - w + (i - w - steady)};
}

bool GraphBuilder::emit_step_fast(int r) {
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

double GraphBuilder::emit_bucketed_pass(int r, const PipelineStep& st, int j, double start) {
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

const GraphBuilder::BucketedPass& GraphBuilder::bucketed_pass(const std::vector<LoweredOp>& ops) {
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

double GraphBuilder::checked(int stage, double duration, const PipelineStep& st, int chunk) {
  if (duration >= 0 && std::isfinite(duration)) return duration;
  const bool weight = !st.forward && st.backward == BackwardKind::kWeight;
  record_bad_duration(stage, duration,
                      Label{st.forward ? "F" : (weight ? "W" : "B"), st.micro_batch, chunk});
  return 0;
}

double GraphBuilder::checked_transfer(int stage, double duration) {
  if (duration >= 0 && std::isfinite(duration)) return duration;
  record_bad_duration(stage, duration, Label{"pipeline transfer"});
  return 0;
}

}  // namespace llmplan::simulator::simulate_internal

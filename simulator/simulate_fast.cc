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
  } else if (!stages_.empty() && !stages_[0].generated) {
    run_listed_sweeps();
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
// dependency, so none waits. With w_r = p - 1 - r warm-up forwards, stage r
// runs F(0 .. w_r - 1), then in round i = 0 .. m - 1 the forward F(w_r + i)
// while there is one (i < m - w_r) and the backward B(i): its steps in its
// own order. The warm-ups go first, stage 0 to p - 1 (F(i) on r needs r -
// 1's, a warm-up forward since w_(r-1) > w_r). Round i of stage r needs
// round i of r + 1 (B(i) comes from r + 1), round i - 1 of r - 1 (F(w_r +
// i) is r - 1's forward of round i - 1, as w_(r-1) = w_r + 1; at i = 0 its
// warm-up) and its own round i - 1; so rounds run by level 2i + p - 1 - r,
// each a level above what it needs, and the rounds of one level (every
// other stage) are independent, which the processor overlaps. The loop runs
// rounds 0 .. m - 2; the last round (whose backwards release the DP
// buckets) is left to run_fast's work list and emit_step_fast.
//
// zb-h1 runs its F and B steps in 1F1B's order (schedule.h: without its W
// steps a zb-h1 stage is a 1F1B stage), so the same order holds; a W step
// needs nothing from other stages, so each runs right after the step it
// follows on its stage: after B(q) for q >= L (zb_h1_step); the L pending
// ones after the last B are the work list's.
//
// Each step is timed with emit_step_fast's arithmetic, operation for
// operation (start = max(stream end, transfer end), end = start + duration,
// the idle-time and busy sums, the send's end), so the result is bit for
// bit the reference engine's; only the order of independent steps differs,
// and the bookkeeping emit_step_fast needs for any schedule (step decoding,
// bucket checks, the work list) is left out.
bool GraphBuilder::ordered_1f1b_times_valid(bool zb) const {
  auto good = [](double d) { return d >= 0 && std::isfinite(d); };
  for (int r = 0; r < p_; ++r) {
    const ChunkProgram& prog = *programs_[r];
    if (!good(prog.forward_s) || !good(send_fwd_s_[r]) || !good(send_bwd_s_[r])) return false;
    if (zb ? !good(prog.backward_input_s) || !good(prog.backward_weight_s)
           : !good(prog.backward_s)) {
      return false;
    }
  }
  return true;
}

void GraphBuilder::load_lanes(bool zb) {
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
                    zb ? std::min(r, m - st.warmup) : m};
  }
}

void GraphBuilder::store_lanes() {
  const int m = m_, p = p_;
  const Lane* lanes = lanes_.data();
  int tasks = 0;
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
    // Its passes and sends: F(0 .. w + m - 2) (w + m - 1 of them, none for
    // a stage without a round's forward), B(0 .. m - 2), the W's.
    const int forwards = std::min(lane.warmup + m - 1, m);
    const int backwards = m - 1;
    tasks += forwards * lane.forward_tasks + backwards * lane.backward_tasks +
             (lane.next - forwards - backwards);
  }
  external_tasks_ += tasks;
}

void GraphBuilder::run_ordered_1f1b() {
  // Pass and transfer times per chunk (v = 1: chunk = stage); the lean
  // loop below needs them all valid, else the general step reports the
  // bad one exactly as the reference engine does.
  const bool zb = plan_.schedule == Schedule::kZbH1;
  if (!ordered_1f1b_times_valid(zb)) return;
  // The loop works on local copies (no aliasing between the stages' state
  // and the transfer arrays, so the compiler keeps them in registers) and
  // writes them back at the end.
  load_lanes(zb);
  const int m = m_, p = p_;
  Lane* __restrict lanes = lanes_.data();
  // A transfer read before it was written (an order bug): the loop goes on
  // (it cannot wait) and the build fails.
  bool early = false;
  // A pass on lane l after a transfer that ended at `transfer_end` (0 for
  // the end stages' zero rows) and took `transfer_s`; the idle time as
  // pass_times() computes it from segments, added without a branch (+0.0
  // leaves the non-negative sum unchanged).
  // A stage's changing state, copied out of its lane for one round (the
  // compiler keeps a local in registers; the lane it must reload after
  // every store into the transfer arrays, which might alias it).
  struct Clock {
    double compute_end, forward_end, backward_end, busy, pp_wait;
    int next;
  };
  auto load = [](const Lane& l) __attribute__((always_inline)) {
    return Clock{l.compute_end, l.forward_end, l.backward_end, l.busy, l.pp_wait, l.next};
  };
  auto store = [](const Clock& c, Lane& l) __attribute__((always_inline)) {
    l.compute_end = c.compute_end;
    l.forward_end = c.forward_end;
    l.backward_end = c.backward_end;
    l.busy = c.busy;
    l.pp_wait = c.pp_wait;
    l.next = c.next;
  };
  auto run_pass = [&](Clock& c, double transfer_end, double transfer_s, double duration)
      __attribute__((always_inline)) -> double {
    early |= transfer_end < 0;
    const double start = std::max(c.compute_end, transfer_end);
    const double end = start + duration;
    const double gap = start - c.compute_end;
    const double wait = std::min(gap, transfer_s);
    c.pp_wait += (gap > 0 && transfer_end >= start - 1e-15) ? wait : 0.0;
    c.busy += end - start;
    c.compute_end = end;
    ++c.next;
    return end;
  };
  auto forward = [&](const Lane& l, Clock& c, int mb) __attribute__((always_inline)) {
    const double end = run_pass(c, l.in_forward[mb], l.in_forward_s, l.forward_s);
    c.forward_end = std::max(c.forward_end, end) + l.out_forward_s;
    l.out_forward[mb] = c.forward_end;
  };
  // B(mb), then (zb-h1, mb >= L) the W step after it: after the compute
  // stream's previous pass, nothing sent.
  auto backward = [&](const Lane& l, Clock& c, int mb) __attribute__((always_inline)) {
    const double end = run_pass(c, l.in_backward[mb], l.in_backward_s, l.backward_s);
    c.backward_end = std::max(c.backward_end, end) + l.out_backward_s;
    l.out_backward[mb] = c.backward_end;
    if (mb >= l.lag) {
      const double w_start = c.compute_end;
      const double w_end = w_start + l.weight_s;
      c.busy += w_end - w_start;
      c.compute_end = w_end;
      ++c.next;
    }
  };
  for (int r = 0; r < p; ++r) {
    Clock c = load(lanes[r]);
    for (int i = 0; i < lanes[r].warmup; ++i) forward(lanes[r], c, i);
    store(c, lanes[r]);
  }
  // Round i of stage r at level 2i + p - 1 - r (see above).
  for (int level = 0; level <= 2 * (m - 2) + p - 1; ++level) {
    const int first = p - 1 - level;  // the stage of round 0, if any
    const int lo = first >= 0 ? first : (level - p + 1) & 1;
    int hi = std::min(p - 1, 2 * (m - 2) + first);
    if (((hi - lo) & 1) != 0) --hi;
    for (int r = lo; r <= hi; r += 2) {
      Lane& l = lanes[r];
      Clock c = load(l);
      const int i = (r - first) >> 1;
      // A forward while the stage has one (i < m - w_r).
      if (i + l.warmup < m) forward(l, c, l.warmup + i);
      backward(l, c, i);
      store(c, l);
    }
  }
  store_lanes();
  if (early && duration_error_.ok()) {
    duration_error_ = Status::internal("1F1B replay read a transfer before it ended (order bug)");
  }
}

// Listed steps (interleaved, GPipe): sweeps over the stages, alternately
// up and down, each stage running its steps until one waits for a transfer
// not yet emitted, until a sweep makes no progress; the work list finishes
// whatever is left. Each step is timed as emit_step_fast times it, with the
// end stages' transfers read from the zero rows (see build(): a pass starts
// at >= 0, so they neither delay it nor count as a wait), and the pass that
// releases DP buckets handed to emit_step_fast itself.
void GraphBuilder::run_listed_sweeps() {
  // Every duration valid, else the work list reports the bad one.
  auto good = [](double d) { return d >= 0 && std::isfinite(d); };
  const int chunks = p_ * v_;
  for (int j = 0; j < chunks; ++j) {
    const ChunkProgram& prog = *programs_[j];
    if (prog.split_backward || !good(prog.forward_s) || !good(prog.backward_s) ||
        !good(send_fwd_s_[j]) || !good(send_bwd_s_[j])) {
      return;
    }
  }
  const int p = p_, m = m_;
  bool progress = true;
  for (bool up = true; progress; up = !up) {
    progress = false;
    for (int q = 0; q < p; ++q) {
      const int r = up ? q : p - 1 - q;
      StageState& st = stages_[r];
      size_t k = st.next;
      double compute_end = st.compute_end_s, forward_end = st.pipe_forward_end_s;
      double backward_end = st.pipe_backward_end_s, busy = st.busy_s, wait = st.pp_wait_s;
      int tasks = 0;
      for (; k < st.count; ++k) {
        const PipelineStep& step = st.steps[k];
        const int j = step.virtual_chunk * p + r, mb = step.micro_batch;
        if (overlap_buckets_ && !step.forward &&
            static_cast<int>(k) == st.last_backward[step.virtual_chunk]) {
          // Hand the stage's state to emit_step_fast and take it back.
          st.compute_end_s = compute_end;
          st.pipe_forward_end_s = forward_end;
          st.pipe_backward_end_s = backward_end;
          st.busy_s = busy;
          st.pp_wait_s = wait;
          st.next = k;
          if (!emit_step_fast(r)) break;
          compute_end = st.compute_end_s;
          forward_end = st.pipe_forward_end_s;
          backward_end = st.pipe_backward_end_s;
          busy = st.busy_s;
          wait = st.pp_wait_s;
          continue;
        }
        const double transfer_end = step.forward
                                        ? fwd_end_[static_cast<ptrdiff_t>(j - 1) * m + mb]
                                        : bwd_end_[static_cast<ptrdiff_t>(j + 1) * m + mb];
        if (transfer_end < 0) break;
        const double transfer_s = step.forward ? (j > 0 ? send_fwd_s_[j - 1] : 0.0)
                                               : (j < chunks - 1 ? send_bwd_s_[j + 1] : 0.0);
        const ChunkProgram& prog = *programs_[j];
        const double start = std::max(compute_end, transfer_end);
        const double end = start + (step.forward ? prog.forward_s : prog.backward_s);
        const double gap = start - compute_end;
        if (gap > 0 && transfer_end >= start - 1e-15) wait += std::min(gap, transfer_s);
        busy += end - start;
        compute_end = end;
        ++tasks;
        if (step.forward) {
          if (j < chunks - 1) {
            forward_end = std::max(forward_end, end) + send_fwd_s_[j];
            fwd_end_[idx(j, mb)] = forward_end;
            ++tasks;
          }
        } else if (j > 0) {
          backward_end = std::max(backward_end, end) + send_bwd_s_[j];
          bwd_end_[idx(j, mb)] = backward_end;
          ++tasks;
        }
      }
      progress = progress || k != st.next;
      st.any_pass = st.any_pass || k > 0;
      st.next = k;
      st.compute_end_s = compute_end;
      st.pipe_forward_end_s = forward_end;
      st.pipe_backward_end_s = backward_end;
      st.busy_s = busy;
      st.pp_wait_s = wait;
      external_tasks_ += tasks;
    }
  }
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
      wake(r + 1 == p_ ? 0 : r + 1);  // chunk j + 1's stage, (j + 1) % p
    }
  } else if (!weight && j > 0) {
    const double s = std::max(state.pipe_backward_end_s, end);
    state.pipe_backward_end_s = s + checked_transfer(r, send_bwd_s_[j]);
    bwd_end_[idx(j, st.micro_batch)] = state.pipe_backward_end_s;
    ++external_tasks_;
    wake(r == 0 ? p_ - 1 : r - 1);  // chunk j - 1's stage, (j - 1) % p
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

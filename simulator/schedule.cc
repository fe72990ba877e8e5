#include "simulator/schedule.h"

#include <algorithm>

namespace llmplan::simulator {
namespace {

// Megatron-LM's interleaved order: micro-step k maps to chunk k % (p v) / p
// (forwards go through chunks 0..v-1, backwards v-1..0) and micro-batch
// k / (p v) * p + k % p. These are its steps for k = 0, 1, ...,
// with the divisions done once (a stage's list is built for every simulated
// interleaved plan, twice: the replay and the memory peak).
class InterleavedSteps {
 public:
  InterleavedSteps(const Plan& plan, bool forward)
      : p_(plan.pipeline_parallel), v_(plan.virtual_stages), forward_(forward) {}
  // The current step; then moves to the next k.
  PipelineStep next() {
    const PipelineStep s{forward_, forward_ ? chunk_ : v_ - 1 - chunk_, group_ * p_ + in_p_};
    if (++in_p_ == p_) {
      in_p_ = 0;
      if (++chunk_ == v_) {
        chunk_ = 0;
        ++group_;
      }
    }
    return s;
  }

 private:
  int p_, v_;
  bool forward_;
  int group_ = 0, chunk_ = 0, in_p_ = 0;  // k / (p v), k % (p v) / p, k % p
};

// Calls visit(step) for each step of stage_schedule(plan, stage), in order,
// without building the list (the memory peaks only scan it).
template <class Visit>
void visit_schedule(const Plan& plan, int stage, Visit&& visit) {
  const int p = plan.pipeline_parallel;
  const int m = plan.num_micro_batches();
  switch (plan.schedule) {
    case Schedule::kGpipe:
      for (int i = 0; i < m; ++i) visit({true, 0, i});
      for (int i = 0; i < m; ++i) visit({false, 0, i});
      break;
    case Schedule::kOneFOneB: {
      const int warmup = std::min(p - stage - 1, m);
      for (int i = 0; i < warmup; ++i) visit({true, 0, i});
      for (int i = 0; i < m - warmup; ++i) {
        visit({true, 0, warmup + i});
        visit({false, 0, i});
      }
      for (int i = m - warmup; i < m; ++i) visit({false, 0, i});
      break;
    }
    case Schedule::kInterleaved: {
      const int v = plan.virtual_stages;
      const int total = m * v;
      int warmup = (m == p) ? total : std::min((p - stage - 1) * 2 + (v - 1) * p, total);
      InterleavedSteps forwards(plan, true), backwards(plan, false);
      for (int k = 0; k < warmup; ++k) visit(forwards.next());
      for (int k = 0; k < total - warmup; ++k) {
        visit(forwards.next());
        visit(backwards.next());
      }
      for (int k = total - warmup; k < total; ++k) visit(backwards.next());
      break;
    }
    case Schedule::kZbH1: {
      const int warmup = std::min(p - stage - 1, m);
      const int lag = std::min(stage, m - warmup);
      auto b = [](int i) { return PipelineStep{false, 0, i, BackwardKind::kInput}; };
      auto w = [](int i) { return PipelineStep{false, 0, i, BackwardKind::kWeight}; };
      int next_w = 0;
      for (int i = 0; i < warmup; ++i) visit({true, 0, i});
      for (int k = 0; k < m - warmup; ++k) {
        visit({true, 0, warmup + k});
        visit(b(k));
        if (k >= lag) visit(w(next_w++));
      }
      for (int k = m - warmup; k < m; ++k) {
        visit(b(k));
        visit(w(next_w++));
      }
      while (next_w < m) visit(w(next_w++));
      break;
    }
  }
}

}  // namespace

std::vector<PipelineStep> stage_schedule(const Plan& plan, int stage) {
  std::vector<PipelineStep> steps;
  steps.reserve(static_cast<size_t>(plan.schedule == Schedule::kZbH1 ? 3 : 2) *
                plan.num_micro_batches() * plan.virtual_stages);
  visit_schedule(plan, stage, [&](const PipelineStep& s) { steps.push_back(s); });
  return steps;
}

PipelineStep zb_h1_step(int p, int m, int stage, int k) {
  // The sections of stage_schedule's kZbH1 case: w warm-up forwards; s = m - w
  // steady iterations, the first L of two steps (F, B), the rest of three
  // (F, B, W); w cool-down pairs (B, W); the L pending W's.
  const int w = std::min(p - stage - 1, m);
  const int s = m - w;
  const int lag = std::min(stage, s);
  auto forward = [](int i) { return PipelineStep{true, 0, i}; };
  auto b = [](int i) { return PipelineStep{false, 0, i, BackwardKind::kInput}; };
  auto wg = [](int i) { return PipelineStep{false, 0, i, BackwardKind::kWeight}; };
  if (k < w) return forward(k);
  const int i = k - w;
  if (i < 2 * lag) return (i & 1) == 0 ? forward(w + i / 2) : b(i / 2);
  const int steady = 3 * s - lag;
  if (i < steady) {
    const int j = i - 2 * lag, kk = lag + j / 3;
    return j % 3 == 0 ? forward(w + kk) : j % 3 == 1 ? b(kk) : wg(kk - lag);
  }
  const int c = i - steady;
  if (c < 2 * w) return (c & 1) == 0 ? b(s + c / 2) : wg(s - lag + c / 2);
  return wg(m - lag + (c - 2 * w));
}

std::vector<int> peak_in_flight(const Plan& plan, int stage) {
  const int v = plan.virtual_stages;
  // Closed forms of the loop below for the schedules without interleaving
  // (schedule_test.cc checks them against it): GPipe holds every forward;
  // 1F1B its warm-up forwards plus the steady state's one more.
  const int m = plan.num_micro_batches();
  if (v == 1 && plan.schedule == Schedule::kGpipe) return {m};
  if (v == 1 && plan.schedule == Schedule::kOneFOneB) {
    const int warmup = std::min(plan.pipeline_parallel - stage - 1, m);
    return {warmup < m ? warmup + 1 : warmup};
  }
  return peak_in_flight_by_steps(plan, stage);
}

std::vector<int> peak_in_flight_by_steps(const Plan& plan, int stage) {
  const int v = plan.virtual_stages;
  std::vector<int> live(v, 0), best(v, 0);
  int live_total = 0, best_total = -1;
  visit_schedule(plan, stage, [&](const PipelineStep& s) {
    if (!s.forward && s.backward == BackwardKind::kWeight) return;
    live[s.virtual_chunk] += s.forward ? 1 : -1;
    live_total += s.forward ? 1 : -1;
    if (live_total > best_total) {
      best_total = live_total;
      best = live;
    }
  });
  return best;
}

SplitInFlight peak_in_flight_split(const Plan& plan, int stage, double forward_bytes,
                                   double weight_grad_bytes) {
  SplitInFlight live, best;
  double best_bytes = -1;
  auto visit = [&](const PipelineStep& s) {
    if (s.forward) {
      ++live.forwards;
    } else if (s.backward == BackwardKind::kWeight) {
      --live.deferred_weight_grads;
    } else {
      --live.forwards;
      if (s.backward == BackwardKind::kInput) ++live.deferred_weight_grads;
    }
    const double bytes =
        live.forwards * forward_bytes + live.deferred_weight_grads * weight_grad_bytes;
    if (bytes > best_bytes) {
      best_bytes = bytes;
      best = live;
    }
  };
  if (plan.schedule == Schedule::kZbH1) {
    // Step by step through zb_h1_step's sections (no list built; visit
    // reads only a step's kind): w warm-up F's, L (F, B) pairs, the steady
    // (F, B, W) iterations, w cool-down (B, W) pairs and L pending W's. The
    // steady iterations after the first one pass through the same
    // (forwards, deferred W's) states as it, (w + 1, L), (w, L + 1), (w,
    // L), so they cannot raise the peak (nor change the first instant of
    // it): only the first is visited.
    const int p = plan.pipeline_parallel, m = plan.num_micro_batches();
    const int w = std::min(p - stage - 1, m), s = m - w, lag = std::min(stage, s);
    const PipelineStep f{true, 0, 0}, b{false, 0, 0, BackwardKind::kInput},
        wg{false, 0, 0, BackwardKind::kWeight};
    for (int i = 0; i < w; ++i) visit(f);
    for (int i = 0; i < lag; ++i) {
      visit(f);
      visit(b);
    }
    if (s > lag) {
      visit(f);
      visit(b);
      visit(wg);
    }
    for (int i = 0; i < w; ++i) {
      visit(b);
      visit(wg);
    }
    for (int i = 0; i < lag; ++i) visit(wg);
  } else {
    visit_schedule(plan, stage, visit);
  }
  return best;
}

}  // namespace llmplan::simulator

#include "simulator/schedule.h"

#include <algorithm>

namespace llmplan::simulator {
namespace {

// Megatron-LM's interleaved order: micro-step k maps to a chunk and a
// micro-batch; forwards go through chunks 0..v-1, backwards v-1..0.
PipelineStep interleaved_step(const Plan& plan, int k, bool forward) {
  const int p = plan.pipeline_parallel, v = plan.virtual_stages;
  const int in_group = k % (p * v);
  int chunk = in_group / p;
  if (!forward) chunk = v - 1 - chunk;
  const int micro_batch = (k / (p * v)) * p + k % p;
  return {forward, chunk, micro_batch};
}

}  // namespace

std::vector<PipelineStep> stage_schedule(const Plan& plan, int stage) {
  const int p = plan.pipeline_parallel;
  const int m = plan.num_micro_batches();
  std::vector<PipelineStep> steps;
  steps.reserve(static_cast<size_t>(plan.schedule == Schedule::kZbH1 ? 3 : 2) * m *
                plan.virtual_stages);
  switch (plan.schedule) {
    case Schedule::kGpipe:
      for (int i = 0; i < m; ++i) steps.push_back({true, 0, i});
      for (int i = 0; i < m; ++i) steps.push_back({false, 0, i});
      break;
    case Schedule::kOneFOneB: {
      const int warmup = std::min(p - stage - 1, m);
      for (int i = 0; i < warmup; ++i) steps.push_back({true, 0, i});
      for (int i = 0; i < m - warmup; ++i) {
        steps.push_back({true, 0, warmup + i});
        steps.push_back({false, 0, i});
      }
      for (int i = m - warmup; i < m; ++i) steps.push_back({false, 0, i});
      break;
    }
    case Schedule::kInterleaved: {
      const int v = plan.virtual_stages;
      const int total = m * v;
      int warmup = (m == p) ? total : std::min((p - stage - 1) * 2 + (v - 1) * p, total);
      for (int k = 0; k < warmup; ++k) steps.push_back(interleaved_step(plan, k, true));
      for (int k = 0; k < total - warmup; ++k) {
        steps.push_back(interleaved_step(plan, warmup + k, true));
        steps.push_back(interleaved_step(plan, k, false));
      }
      for (int k = total - warmup; k < total; ++k) steps.push_back(interleaved_step(plan, k, false));
      break;
    }
    case Schedule::kZbH1: {
      const int warmup = std::min(p - stage - 1, m);
      const int lag = std::min(stage, m - warmup);
      auto b = [](int i) { return PipelineStep{false, 0, i, BackwardKind::kInput}; };
      auto w = [](int i) { return PipelineStep{false, 0, i, BackwardKind::kWeight}; };
      int next_w = 0;
      for (int i = 0; i < warmup; ++i) steps.push_back({true, 0, i});
      for (int k = 0; k < m - warmup; ++k) {
        steps.push_back({true, 0, warmup + k});
        steps.push_back(b(k));
        if (k >= lag) steps.push_back(w(next_w++));
      }
      for (int k = m - warmup; k < m; ++k) {
        steps.push_back(b(k));
        steps.push_back(w(next_w++));
      }
      while (next_w < m) steps.push_back(w(next_w++));
      break;
    }
  }
  return steps;
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
  for (const PipelineStep& s : stage_schedule(plan, stage)) {
    if (!s.forward && s.backward == BackwardKind::kWeight) continue;
    live[s.virtual_chunk] += s.forward ? 1 : -1;
    live_total += s.forward ? 1 : -1;
    if (live_total > best_total) {
      best_total = live_total;
      best = live;
    }
  }
  return best;
}

SplitInFlight peak_in_flight_split(const Plan& plan, int stage, double forward_bytes,
                                   double weight_grad_bytes) {
  SplitInFlight live, best;
  double best_bytes = -1;
  for (const PipelineStep& s : stage_schedule(plan, stage)) {
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
  }
  return best;
}

}  // namespace llmplan::simulator

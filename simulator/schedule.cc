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
  steps.reserve(static_cast<size_t>(2) * m * plan.virtual_stages);
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
  }
  return steps;
}

std::vector<int> peak_in_flight(const Plan& plan, int stage) {
  const int v = plan.virtual_stages;
  std::vector<int> live(v, 0), best(v, 0);
  int live_total = 0, best_total = -1;
  for (const PipelineStep& s : stage_schedule(plan, stage)) {
    live[s.virtual_chunk] += s.forward ? 1 : -1;
    live_total += s.forward ? 1 : -1;
    if (live_total > best_total) {
      best_total = live_total;
      best = live;
    }
  }
  return best;
}

}  // namespace llmplan::simulator

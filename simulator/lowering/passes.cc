#include "simulator/lowering/passes.h"

#include <algorithm>
#include <cstdint>

#include "base/status.h"

namespace llmplan::simulator {

void apply_launch_queue(double launch_interval_s, double run_ahead_s,
                        std::vector<LoweredOp>* ops) {
  double host = 0, gpu = 0;  // when the host is free; when the GPU is
  for (LoweredOp& op : *ops) {
    double end;
    if (op.category == OpCategory::kHostOverhead) {
      host += op.duration_s;
      end = std::max(gpu, host);
    } else {
      host = std::max(host, gpu - run_ahead_s) + launch_interval_s;
      end = std::max(host, gpu) + op.duration_s;
    }
    op.duration_s = end - gpu;
    gpu = end;
  }
}

namespace lowering {
namespace {

// tp_comm_overlap: pipelines each TP collective with its paired GEMM (see
// passes.h); returns the collective time hidden.
double overlap_pass(int chunks, double slowdown, std::vector<LoweredOp>* ops) {
  double hidden = 0;
  const double n = chunks;
  for (size_t k = 0; k < ops->size(); ++k) {
    LoweredOp& op = (*ops)[k];
    if (op.category != OpCategory::kTensorComm || op.tp_pair == 0) continue;
    const int64_t q = static_cast<int64_t>(k) + op.tp_pair;
    if (q < 0 || q >= static_cast<int64_t>(ops->size())) continue;
    LoweredOp& g = (*ops)[static_cast<size_t>(q)];
    if (!g.gemm) continue;
    const double c = op.duration_s;
    // An all-gather (paired with the GEMM after it) runs as a ring exchange:
    // the GEMM starts on the local chunk, so only steps slower than their
    // chunk's GEMM show. A reduce-scatter (paired with the GEMM before it)
    // runs as a pipeline: the last chunk's transfer follows the whole GEMM.
    const double exposed = op.tp_pair > 0
                               ? std::max(0.0, c - (n - 1) / n * g.duration_s)
                               : c / n + (n - 1) / n * std::max(0.0, c - g.duration_s);
    const double hid = c - exposed;
    op.duration_s = exposed;
    g.duration_s += slowdown * hid;
    g.slowdown_s += slowdown * hid;
    hidden += hid;
  }
  return hidden;
}

// split_backward on one pass: its B ops into `input`, its W ops (the
// weight_grad kernels) into `weight`, with the units of each.
void split_pass(const std::vector<LoweredOp>& ops, const std::vector<Unit>& units,
                std::vector<LoweredOp>* input, std::vector<Unit>* input_units,
                std::vector<LoweredOp>* weight, std::vector<Unit>* weight_units) {
  input->reserve(ops.size());
  size_t k = 0;
  for (const Unit& u : units) {
    for (; k < u.begin; ++k) input->push_back(ops[k]);
    const size_t input_begin = input->size(), weight_begin = weight->size();
    double ready = 0, expert_ready = 0;
    for (; k < u.end; ++k) {
      ready += ops[k].grad_ready_bytes;
      expert_ready += ops[k].expert_grad_ready_bytes;
      (ops[k].weight_grad ? weight : input)->push_back(ops[k]);
    }
    // Every unit with a gradient has a W op (a weight-gradient GEMM or the
    // embedding's scatter), so the data-parallel buckets of W see it all.
    LLMPLAN_CHECK((ready == 0 && expert_ready == 0) || weight->size() > weight_begin);
    if (weight->size() > weight_begin) {
      for (size_t q = input_begin; q < input->size(); ++q) {
        (*input)[q].grad_ready_bytes = 0;
        (*input)[q].expert_grad_ready_bytes = 0;
      }
      for (size_t q = weight_begin; q < weight->size(); ++q) {
        (*weight)[q].grad_ready_bytes = 0;
        (*weight)[q].expert_grad_ready_bytes = 0;
      }
      weight->back().grad_ready_bytes = ready;
      weight->back().expert_grad_ready_bytes = expert_ready;
    }
    input_units->push_back({input_begin, input->size(), u.parameters, u.expert_parameters});
    weight_units->push_back({weight_begin, weight->size(), u.parameters, u.expert_parameters});
  }
  for (; k < ops.size(); ++k) input->push_back(ops[k]);
}

}  // namespace

void split_backward(ChunkProgram* prog, PassUnits* units) {
  split_pass(prog->backward, units->backward, &prog->backward_input, &units->input,
             &prog->backward_weight, &units->weight);
}

void overlap_tp(const Plan& plan, const CostModel& cost, ChunkProgram* prog) {
  const int t = plan.tensor_parallel;
  if (!plan.tp_comm_overlap || t <= 1) return;
  const double slowdown = cost.comm_compute_slowdown();
  const double forward = overlap_pass(t, slowdown, &prog->forward);
  const double backward = overlap_pass(t, slowdown, &prog->backward);
  prog->tp_hidden_s = forward + backward;
  if (prog->split_backward) {
    prog->tp_hidden_s = forward + overlap_pass(t, slowdown, &prog->backward_input) +
                        overlap_pass(t, slowdown, &prog->backward_weight);
  }
}

void queue_launches(const CostModel& cost, ChunkProgram* prog) {
  const double interval = cost.launch_interval_s(), run_ahead = cost.host_run_ahead_s();
  apply_launch_queue(interval, run_ahead, &prog->forward);
  apply_launch_queue(interval, run_ahead, &prog->backward);
  for (const LoweredOp& op : prog->forward) prog->forward_s += op.duration_s;
  for (const LoweredOp& op : prog->backward) prog->backward_s += op.duration_s;
  if (prog->split_backward) {
    apply_launch_queue(interval, run_ahead, &prog->backward_input);
    apply_launch_queue(interval, run_ahead, &prog->backward_weight);
    for (const LoweredOp& op : prog->backward_input) prog->backward_input_s += op.duration_s;
    for (const LoweredOp& op : prog->backward_weight) prog->backward_weight_s += op.duration_s;
  }
}

}  // namespace lowering
}  // namespace llmplan::simulator

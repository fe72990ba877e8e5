// Per-device memory of a training plan (DESIGN.md section 4).
#ifndef LLMPLAN_SIMULATOR_MEMORY_H_
#define LLMPLAN_SIMULATOR_MEMORY_H_

#include <cstdint>
#include <vector>

#include "simulator/cluster.h"
#include "simulator/model.h"
#include "simulator/plan.h"

namespace llmplan::simulator {

// Bytes held by one device of one pipeline stage at its peak.
struct MemoryBreakdown {
  double parameters = 0;          // parameters held (count, not bytes)
  double weights_and_optimizer_bytes = 0;  // weights + grads + Adam state
  double activation_bytes = 0;    // stored activations of in-flight micro-batches
  double recompute_bytes = 0;     // one layer's full activations while recomputing
  double logits_bytes = 0;        // last stage: logits and loss of one micro-batch
  double reserved_bytes = 0;      // CUDA context, NCCL and cuBLAS workspaces
  int in_flight_micro_batches = 0;
  double total_bytes() const {
    return weights_and_optimizer_bytes + activation_bytes + recompute_bytes + logits_bytes +
           reserved_bytes;
  }
};

// Activations one layer stores for one micro-batch on one device, bytes.
// Korthikanti et al. 2022: s b h (34 + 5 a s / h) with no parallelism; with
// tensor parallelism s b h (10 + 24/t + 5 a s /(h t)); with sequence
// parallelism everything is divided by t. Generalised to GQA and any FFN
// size/activation (the 34 is 4 LN + 11 attention + 19 MLP for f = 4h GeLU).
// Selective recomputation and flash attention drop the 5 a s / h term; full
// recomputation keeps only the layer input, 2 s b h (divided by t with SP).
double layer_activation_bytes(const Model& model, const Plan& plan);

// Bytes of weights, gradients and optimizer state per parameter: 18 for
// mixed-precision Adam (2 weight + 4 fp32 gradient + 4 master + 8 moments),
// 6 + 12/d with the distributed optimizer (ZeRO-1).
double state_bytes_per_parameter(const Plan& plan);

// Memory of every stage of `plan`, given each stage's parameters (per
// device) and model chunks. `reserved_bytes` covers the CUDA context and
// library workspaces.
// REQUIRES: validate(model, plan).ok().
std::vector<MemoryBreakdown> stage_memory(const Model& model, const Plan& plan,
                                          const std::vector<double>& stage_parameters,
                                          double reserved_bytes);

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_MEMORY_H_

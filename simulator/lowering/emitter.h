// Internal to the lowering (simulator/lowering.cc and simulator/lowering/):
// the emission context every layer part shares -- the chunk's shapes on one
// tensor-parallel rank, the plan's number formats -- and the helpers that
// turn a kernel or a collective into a LoweredOp whose duration comes from
// the CostModel. Not a public interface: lowering.h is the manual.
#ifndef LLMPLAN_SIMULATOR_LOWERING_EMITTER_H_
#define LLMPLAN_SIMULATOR_LOWERING_EMITTER_H_

#include <vector>

#include "simulator/cost_model.h"
#include "simulator/lowering.h"
#include "simulator/precision.h"
#include "simulator/model.h"
#include "simulator/plan.h"

namespace llmplan::simulator::lowering {

inline constexpr double kElem = 2.0;  // bf16 / fp16 activations

// Emits the ops of one chunk's micro-batch passes into a vector of
// LoweredOps. Every layer part (layer_part.h) and the embedding and head
// derive from it, so their code reads the shapes by the names of the
// lowering's formulas (t_, b_, s_, h_, T_, ...). All shapes are per
// tensor-parallel rank. Cheap to construct (a few dozen numbers); holds
// references to its arguments, which must outlive it. The helpers only
// append to `out`; they are const and may run on many threads at once.
class Emitter {
 public:
  Emitter(const Model& model, const Plan& plan, const Placement& placement,
          const CostModel& cost);

  // Tokens of one micro-batch on this rank: b * s / cp.
  double tokens() const { return T_; }

  // A kernel of `desc` on the compute stream, in category `cat`.
  void push_kernel(std::vector<LoweredOp>* out, const KernelDesc& desc, OpCategory cat) const;
  // A GEMM [m,k] x [k,n], `batch` times, in the precision gemm_precision() gives its kind.
  void gemm(std::vector<LoweredOp>* out, KernelKind kind, Pass pass, double m, double n, double k,
            double batch, OpCategory cat) const;
  // Data- and weight-gradient GEMMs of a forward GEMM [m,k]x[k,n]. The
  // weight-gradient GEMM of a parameter GEMM is marked weight_grad; the
  // attention GEMMs' second operand is an activation, whose gradient B needs.
  void gemm_backward(std::vector<LoweredOp>* out, KernelKind kind, double m, double n, double k,
                     double batch) const;
  // A memory-bound kernel moving `bytes` of HBM, in the 16-bit precision.
  void mem(std::vector<LoweredOp>* out, KernelKind kind, Pass pass, double bytes,
           OpCategory cat) const;
  // FP8 training: the cast (with transpose and amax) of a GEMM operand of
  // `elements` elements to fp8 -- an input of a linear GEMM in the forward,
  // the output gradient entering its backward, or (ZeRO-3) a layer's
  // gathered weights. Nothing otherwise (precision.h).
  void cast(std::vector<LoweredOp>* out, Pass pass, double elements, OpCategory cat) const;

  // A collective of `bytes` (CollectiveDesc::bytes) over `group` as an op on
  // `stream`, in category `cat`.
  LoweredOp collective_op(CollectiveKind kind, double bytes, const CommGroup& group,
                          StreamKind stream, OpCategory cat, const char* name) const;
  // A tensor-parallel collective over Placement::tensor (nothing for t = 1),
  // paired for tp_comm_overlap with the GEMM it feeds (all-gather) or
  // follows (reductions).
  void tp(std::vector<LoweredOp>* out, CollectiveKind kind, double bytes) const;
  // The TP collective after a row-parallel GEMM (forward) or before a
  // column-parallel one's input gradient leaves (backward).
  void tp_reduce(std::vector<LoweredOp>* out) const;
  // Sequence parallelism: the all-gather of the sequence before a
  // column-parallel GEMM; nothing without it.
  void sp_gather(std::vector<LoweredOp>* out) const;
  // The same gather of a linear layer's input (forward) or output gradient
  // (backward), which Transformer Engine quantizes before it gathers in FP8
  // or NVFP4 training: gathered_bytes_per_element (precision.h).
  void sp_gather_quantized(std::vector<LoweredOp>* out) const;
  // The LayerNorm (forward: read x, write y; backward: read x and dy, write
  // dx) and the dropout + residual add (forward: read x and the residual,
  // write y and the 1-byte mask; backward: read dy and the mask, write dx)
  // over the rank's Tsp tokens, as around every pre-norm block.
  void layer_norm(std::vector<LoweredOp>* out, Pass pass, OpCategory cat) const;
  void dropout_residual(std::vector<LoweredOp>* out, Pass pass, OpCategory cat) const;
  // The host's per-micro-batch overhead, when the cost model has one.
  void overhead(std::vector<LoweredOp>* out) const;

 protected:
  const Model& m_;
  const Plan& p_;
  const Placement& pl_;
  const CostModel& cost_;
  int t_, b_, s_, h_, a_, g_, d_, f_, V_;
  int cp_ = 1, sl_ = 0;  // context parallelism; tokens of a sequence on this rank
  double T_, Tsp_;       // tokens of a micro-batch on this rank; with SP, per TP rank
  bool sp_, swiglu_;
  NumberFormats formats_;  // fp8 or 16-bit kernels (precision.h)
};

}  // namespace llmplan::simulator::lowering

#endif  // LLMPLAN_SIMULATOR_LOWERING_EMITTER_H_

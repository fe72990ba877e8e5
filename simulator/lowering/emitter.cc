#include "simulator/lowering/emitter.h"

namespace llmplan::simulator::lowering {

Emitter::Emitter(const Model& model, const Plan& plan, const Placement& placement,
                 const CostModel& cost)
    : m_(model), p_(plan), pl_(placement), cost_(cost) {
  t_ = plan.tensor_parallel;
  b_ = plan.micro_batch_size;
  s_ = model.seq_length;
  h_ = model.hidden_size;
  a_ = model.num_heads;
  g_ = model.kv_heads();
  d_ = model.head_dim();
  f_ = model.ffn_hidden();
  V_ = model.vocab_size;
  cp_ = plan.context_parallel;
  sl_ = s_ / cp_;  // validate(model, plan): 2 * cp divides s
  T_ = static_cast<double>(b_) * sl_;
  sp_ = plan.sequence_parallel && t_ > 1;
  Tsp_ = sp_ ? T_ / t_ : T_;
  swiglu_ = model.activation == Activation::kSwiglu;
  formats_ = number_formats(plan, cost.fp8_transpose_copy());
}

void Emitter::push_kernel(std::vector<LoweredOp>* out, const KernelDesc& desc,
                          OpCategory cat) const {
  LoweredOp op;
  op.stream = StreamKind::kCompute;
  op.category = cat;
  op.duration_s = cost_.kernel_time_s(desc);
  op.flops = desc.flops;
  op.name = kernel_kind_name(desc.kind);
  op.gemm = is_gemm(desc.kind);
  op.expert = desc.kind == KernelKind::kRouterGemm || desc.kind == KernelKind::kMoeRouting ||
              desc.kind == KernelKind::kMoePermute || desc.kind == KernelKind::kExpertFc1Gemm ||
              desc.kind == KernelKind::kExpertFc2Gemm || desc.kind == KernelKind::kMoeExpertBias ||
              desc.kind == KernelKind::kMoeActClamp;
  out->push_back(op);
}

void Emitter::gemm(std::vector<LoweredOp>* out, KernelKind kind, Pass pass, double m, double n,
                   double k, double batch, OpCategory cat) const {
  KernelDesc desc;
  desc.kind = kind;
  desc.pass = pass;
  desc.gemm = {static_cast<int64_t>(m), static_cast<int64_t>(n), static_cast<int64_t>(k),
               static_cast<int64_t>(batch)};
  desc.flops = 2.0 * m * n * k * batch;
  desc.precision = gemm_precision(formats_, kind);
  desc.fp8_block_scaled = formats_.mxfp8 && desc.precision == Precision::kFp8;
  push_kernel(out, desc, cat);
}

void Emitter::gemm_backward(std::vector<LoweredOp>* out, KernelKind kind, double m, double n,
                            double k, double batch) const {
  gemm(out, kind, Pass::kBackwardData, m, n, k, batch, OpCategory::kCompute);
  gemm(out, kind, Pass::kBackwardWeight, m, n, k, batch, OpCategory::kCompute);
  out->back().weight_grad =
      kind != KernelKind::kAttnScoreGemm && kind != KernelKind::kAttnValueGemm;
}

void Emitter::mem(std::vector<LoweredOp>* out, KernelKind kind, Pass pass, double bytes,
                  OpCategory cat) const {
  KernelDesc desc;
  desc.kind = kind;
  desc.pass = pass;
  desc.bytes = bytes;
  desc.precision = formats_.p16;
  push_kernel(out, desc, cat);
}

void Emitter::cast(std::vector<LoweredOp>* out, Pass pass, double elements,
                   OpCategory cat) const {
  KernelDesc desc;
  if (!fp8_cast_kernel(formats_, pass, elements, &desc)) return;
  push_kernel(out, desc, cat == OpCategory::kCompute ? OpCategory::kFp8Cast : cat);
}

LoweredOp Emitter::collective_op(CollectiveKind kind, double bytes, const CommGroup& group,
                                 StreamKind stream, OpCategory cat, const char* name) const {
  CollectiveDesc c;
  c.kind = kind;
  c.bytes = bytes;
  c.group = group;
  LoweredOp op;
  op.stream = stream;
  op.category = cat;
  op.duration_s = cost_.collective_time_s(c);
  op.name = name;
  return op;
}

void Emitter::tp(std::vector<LoweredOp>* out, CollectiveKind kind, double bytes) const {
  if (t_ <= 1) return;
  LoweredOp op = collective_op(kind, bytes, pl_.tensor, StreamKind::kTensorComm,
                               OpCategory::kTensorComm, collective_kind_name(kind));
  op.tp_pair = kind == CollectiveKind::kAllGather ? 1 : -1;
  out->push_back(op);
}

void Emitter::tp_reduce(std::vector<LoweredOp>* out) const {
  tp(out, sp_ ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce, T_ * h_ * kElem);
}

void Emitter::sp_gather(std::vector<LoweredOp>* out) const {
  if (sp_) tp(out, CollectiveKind::kAllGather, T_ * h_ * kElem);
}

void Emitter::sp_gather_quantized(std::vector<LoweredOp>* out) const {
  if (sp_) tp(out, CollectiveKind::kAllGather, T_ * h_ * gathered_bytes_per_element(formats_));
}

void Emitter::layer_norm(std::vector<LoweredOp>* out, Pass pass, OpCategory cat) const {
  if (pass == Pass::kForward) {
    mem(out, KernelKind::kLayerNorm, pass, Tsp_ * h_ * kElem * 2, cat);
  } else {
    mem(out, KernelKind::kLayerNorm, pass, Tsp_ * h_ * kElem * 3, cat);
  }
}

void Emitter::dropout_residual(std::vector<LoweredOp>* out, Pass pass, OpCategory cat) const {
  if (pass == Pass::kForward) {
    mem(out, KernelKind::kDropoutResidual, pass, Tsp_ * h_ * (kElem * 3 + 1), cat);
  } else {
    mem(out, KernelKind::kDropoutResidual, pass, Tsp_ * h_ * (kElem * 2 + 1), cat);
  }
}

void Emitter::overhead(std::vector<LoweredOp>* out) const {
  const double s = cost_.microbatch_overhead_s();
  if (s <= 0) return;
  LoweredOp op;
  op.category = OpCategory::kHostOverhead;
  op.duration_s = s;
  op.name = "host_overhead";
  out->push_back(op);
}

}  // namespace llmplan::simulator::lowering

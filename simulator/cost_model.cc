#include "simulator/cost_model.h"

namespace llmplan::simulator {

const char* kernel_kind_name(KernelKind k) {
  switch (k) {
    case KernelKind::kLayerNorm: return "layernorm";
    case KernelKind::kQkvGemm: return "qkv_gemm";
    case KernelKind::kAttnScoreGemm: return "attn_score_gemm";
    case KernelKind::kSoftmax: return "softmax";
    case KernelKind::kAttnDropout: return "attn_dropout";
    case KernelKind::kAttnValueGemm: return "attn_value_gemm";
    case KernelKind::kFlashAttention: return "flash_attention";
    case KernelKind::kOutProjGemm: return "out_proj_gemm";
    case KernelKind::kDropoutResidual: return "dropout_residual";
    case KernelKind::kFc1Gemm: return "fc1_gemm";
    case KernelKind::kActivation: return "activation";
    case KernelKind::kFc2Gemm: return "fc2_gemm";
    case KernelKind::kEmbedding: return "embedding";
    case KernelKind::kLogitsGemm: return "logits_gemm";
    case KernelKind::kCrossEntropy: return "cross_entropy";
    case KernelKind::kOptimizerStep: return "optimizer_step";
    case KernelKind::kFp8CastTranspose: return "fp8_cast_transpose";
    case KernelKind::kRouterGemm: return "router_gemm";
    case KernelKind::kMoeRouting: return "moe_routing";
    case KernelKind::kMoePermute: return "moe_permute";
    case KernelKind::kExpertFc1Gemm: return "expert_fc1_gemm";
    case KernelKind::kExpertFc2Gemm: return "expert_fc2_gemm";
    case KernelKind::kMoeExpertBias: return "moe_expert_bias";
    case KernelKind::kMoeActClamp: return "moe_act_clamp";
    case KernelKind::kMambaInProjGemm: return "mamba_in_proj_gemm";
    case KernelKind::kMambaConv: return "mamba_conv1d";
    case KernelKind::kSsdScan: return "ssd_scan";
    case KernelKind::kMambaGatedNorm: return "mamba_gated_norm";
    case KernelKind::kMambaOutProjGemm: return "mamba_out_proj_gemm";
    case KernelKind::kRope: return "rope";
    case KernelKind::kCount: break;
  }
  return "?";
}

const char* pass_name(Pass p) {
  switch (p) {
    case Pass::kForward: return "fwd";
    case Pass::kBackwardData: return "bwd_data";
    case Pass::kBackwardWeight: return "bwd_weight";
    case Pass::kBackward: return "bwd";
  }
  return "?";
}

bool is_gemm(KernelKind k) {
  switch (k) {
    case KernelKind::kQkvGemm:
    case KernelKind::kAttnScoreGemm:
    case KernelKind::kAttnValueGemm:
    case KernelKind::kOutProjGemm:
    case KernelKind::kFc1Gemm:
    case KernelKind::kFc2Gemm:
    case KernelKind::kLogitsGemm:
    case KernelKind::kRouterGemm:
    case KernelKind::kExpertFc1Gemm:
    case KernelKind::kExpertFc2Gemm:
    case KernelKind::kMambaInProjGemm:
    case KernelKind::kMambaOutProjGemm:
      return true;
    default:
      return false;
  }
}

const char* collective_kind_name(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::kAllReduce: return "all_reduce";
    case CollectiveKind::kAllGather: return "all_gather";
    case CollectiveKind::kReduceScatter: return "reduce_scatter";
    case CollectiveKind::kSendRecv: return "send_recv";
    case CollectiveKind::kAllToAll: return "all_to_all";
  }
  return "?";
}

}  // namespace llmplan::simulator

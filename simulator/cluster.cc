#include "simulator/cluster.h"

namespace llmplan::simulator {

Status validate(const Cluster& c) {
  auto bad = [](const std::string& field, const std::string& why) {
    return Status::invalid_argument("cluster." + field + ": " + why);
  };
  if (c.gpus_per_node < 1) return bad("gpus_per_node", "must be >= 1");
  if (c.num_nodes < 0) return bad("nodes", "must not be negative");
  if (c.gpu.peak_bf16_flops <= 0) return bad("gpu.peak_bf16_flops", "must be positive");
  if (c.gpu.peak_fp16_flops <= 0) return bad("gpu.peak_fp16_flops", "must be positive");
  if (c.gpu.hbm_bytes <= 0) return bad("gpu.hbm_bytes", "must be positive");
  if (c.gpu.hbm_bytes_per_s <= 0) return bad("gpu.hbm_bytes_per_s", "must be positive");
  if (c.gpu.nvlink_bytes_per_s <= 0) return bad("gpu.nvlink_bytes_per_s", "must be positive");
  if (c.gpu.num_sms <= 0) return bad("gpu.num_sms", "must be positive");
  if (c.nic_bytes_per_s <= 0) return bad("nic_bytes_per_s", "must be positive");
  const RooflineConstants& r = c.gpu.roofline;
  if (r.gemm_efficiency <= 0 || r.gemm_efficiency > 1) {
    return bad("gpu.roofline.gemm_efficiency", "must be in (0, 1]");
  }
  if (r.memory_efficiency <= 0 || r.memory_efficiency > 1) {
    return bad("gpu.roofline.memory_efficiency", "must be in (0, 1]");
  }
  if (r.flash_attention_efficiency <= 0 || r.flash_attention_efficiency > 1) {
    return bad("gpu.roofline.flash_attention_efficiency", "must be in (0, 1]");
  }
  if (r.gemm_dim_half < 0 || r.gemm_tile < 1 || r.kernel_overhead_s < 0 ||
      r.microbatch_overhead_s < 0 || r.iteration_overhead_s < 0 || !(r.host_run_ahead_s >= 0)) {
    return bad("gpu.roofline", "constants must not be negative");
  }
  const NetworkConstants& n = c.network;
  if (n.nvlink_efficiency <= 0 || n.nvlink_efficiency > 1 || n.nic_efficiency <= 0 ||
      n.nic_efficiency > 1) {
    return bad("network", "efficiencies must be in (0, 1]");
  }
  if (n.nvlink_latency_s < 0 || n.nic_latency_s < 0) return bad("network", "latencies must not be negative");
  Status curves = validate(c.collectives);
  if (!curves.ok()) return curves.with_prefix("cluster.collectives");
  if (c.usd_per_gpu_hour < 0) return bad("usd_per_gpu_hour", "must not be negative");
  return Status();
}

}  // namespace llmplan::simulator

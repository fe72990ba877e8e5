#include "simulator/cluster.h"

#include <cmath>

#include "simulator/error_band.h"
#include "simulator/plan.h"

namespace llmplan::simulator {

double peak_flops(const GpuSpec& gpu, Precision precision) {
  switch (precision) {
    case Precision::kBf16: return gpu.peak_bf16_flops;
    case Precision::kFp16: return gpu.peak_fp16_flops;
    case Precision::kFp8: return gpu.peak_fp8_flops;
    case Precision::kNvfp4: return gpu.peak_fp4_flops;
  }
  return 0;
}

double mfu_reference_peak_flops(const GpuSpec& gpu, Precision precision) {
  return precision == Precision::kFp16 ? gpu.peak_fp16_flops : gpu.peak_bf16_flops;
}

double mfu_of_precision_peak(double mfu, const GpuSpec& gpu, Precision precision) {
  const double own = peak_flops(gpu, precision);
  return own > 0 ? mfu * mfu_reference_peak_flops(gpu, precision) / own : 0.0;
}

double model_flops_per_gpu(double mfu, const GpuSpec& gpu, Precision precision) {
  return mfu * mfu_reference_peak_flops(gpu, precision);
}

Status check_host_link(const Plan& plan, const Cluster& cluster) {
  if (plan.cpu_offload_layers <= 0 || cluster.host_link_bytes_per_s > 0) return Status();
  return Status::invalid_argument(
      "plan.cpu_offloading_num_layers: cluster " + cluster.name +
      " has no host link bandwidth (host_link_bytes_per_s); activation CPU offloading is "
      "modelled only where it is given (gb200-nvl72, gb300-nvl72: NVLink-C2C)");
}

Status check_precision(const Plan& plan, const GpuSpec& gpu) {
  const std::string name = gpu.name.empty() ? std::string("this GPU") : "GPU " + gpu.name;
  if (plan.precision == Precision::kNvfp4 && !(gpu.peak_fp4_flops > 0)) {
    return Status::invalid_argument("plan.precision nvfp4: " + name +
                                    " has no FP4 tensor cores (its peak_fp4_flops is 0); use "
                                    "bf16 or fp8, or a Blackwell GPU");
  }
  if (plan.precision != Precision::kFp8) return Status();
  if (!(gpu.peak_fp8_flops > 0)) {
    return Status::invalid_argument("plan.precision fp8: " + name +
                                    " has no FP8 tensor cores (its peak_fp8_flops is 0); use "
                                    "bf16, or a Hopper or Blackwell GPU");
  }
  if (plan.fp8_recipe == Fp8Recipe::kMxfp8 && !gpu.fp8_block_scaling) {
    return Status::invalid_argument("plan.fp8_recipe mxfp8: " + name +
                                    " has no MXFP8 block scaling (Blackwell has); use delayed "
                                    "or current");
  }
  return Status();
}

namespace {

// validate(Cluster)'s error for `field`: InvalidArgument "cluster.<field>: <why>".
Status bad_cluster_field(const std::string& field, const std::string& why) {
  return Status::invalid_argument("cluster." + field + ": " + why);
}
// NaN fails every comparison, so each test is written to reject it.
bool positive(double x) { return x > 0 && std::isfinite(x); }
bool fraction(double x) { return x > 0 && x <= 1; }
bool seconds(double x, double max) { return x >= 0 && x <= max; }

// The node shape, cluster size and the GPU's and links' speeds.
Status validate_cluster_shape(const Cluster& c) {
  if (c.gpus_per_node < 1 || c.gpus_per_node > Cluster::kMaxGpusPerNode) {
    return bad_cluster_field("gpus_per_node",
               "must be between 1 and " + std::to_string(Cluster::kMaxGpusPerNode));
  }
  if (c.nvlink_domain_gpus != 0 &&
      (c.nvlink_domain_gpus < c.gpus_per_node || c.nvlink_domain_gpus > Cluster::kMaxGpusPerNode ||
       c.nvlink_domain_gpus % c.gpus_per_node != 0)) {
    return bad_cluster_field("nvlink_domain_gpus", "must be 0 (the node) or a multiple of gpus_per_node (" +
                                         std::to_string(c.gpus_per_node) + ") up to " +
                                         std::to_string(Cluster::kMaxGpusPerNode));
  }
  if (c.num_nodes < 0) return bad_cluster_field("nodes", "must not be negative");
  if (c.num_nodes > Plan::kMaxGpus / c.gpus_per_node) {
    return bad_cluster_field("nodes",
               "nodes * gpus_per_node must be at most " + std::to_string(Plan::kMaxGpus) + " GPUs");
  }
  if (!positive(c.gpu.peak_bf16_flops)) return bad_cluster_field("gpu.peak_bf16_flops", "must be positive");
  if (!positive(c.gpu.peak_fp16_flops)) return bad_cluster_field("gpu.peak_fp16_flops", "must be positive");
  if (!positive(c.gpu.hbm_bytes)) return bad_cluster_field("gpu.hbm_bytes", "must be positive");
  if (!positive(c.gpu.hbm_bytes_per_s)) return bad_cluster_field("gpu.hbm_bytes_per_s", "must be positive");
  if (!positive(c.gpu.nvlink_bytes_per_s)) return bad_cluster_field("gpu.nvlink_bytes_per_s", "must be positive");
  if (c.gpu.num_sms <= 0) return bad_cluster_field("gpu.num_sms", "must be positive");
  if (!positive(c.nic_bytes_per_s)) return bad_cluster_field("nic_bytes_per_s", "must be positive");
  if (!(c.host_link_bytes_per_s >= 0 && std::isfinite(c.host_link_bytes_per_s))) {
    return bad_cluster_field("host_link_bytes_per_s", "must be a finite number >= 0");
  }
  return Status();
}

// The GPU's roofline constants and their ceilings.
Status validate_cluster_roofline(const Cluster& c) {
  const RooflineConstants& r = c.gpu.roofline;
  if (!fraction(r.gemm_efficiency)) return bad_cluster_field("gpu.roofline.gemm_efficiency", "must be in (0, 1]");
  if (!fraction(r.memory_efficiency)) {
    return bad_cluster_field("gpu.roofline.memory_efficiency", "must be in (0, 1]");
  }
  if (!fraction(r.fp8_gemm_efficiency)) {
    return bad_cluster_field("gpu.roofline.fp8_gemm_efficiency", "must be in (0, 1]");
  }
  if (!(c.gpu.peak_fp8_flops >= 0) || !std::isfinite(c.gpu.peak_fp8_flops)) {
    return bad_cluster_field("gpu.peak_fp8_flops", "must be a finite number >= 0 (0: no FP8)");
  }
  if (!fraction(r.fp4_gemm_efficiency)) {
    return bad_cluster_field("gpu.roofline.fp4_gemm_efficiency", "must be in (0, 1]");
  }
  if (!(c.gpu.peak_fp4_flops >= 0) || !std::isfinite(c.gpu.peak_fp4_flops)) {
    return bad_cluster_field("gpu.peak_fp4_flops", "must be a finite number >= 0 (0: no FP4)");
  }
  if (!fraction(r.flash_attention_efficiency)) {
    return bad_cluster_field("gpu.roofline.flash_attention_efficiency", "must be in (0, 1]");
  }
  if (!(r.ssd_scan_efficiency >= 0 && r.ssd_scan_efficiency <= 1)) {
    return bad_cluster_field("gpu.roofline.ssd_scan_efficiency", "must be in [0, 1] (0: flash attention's)");
  }
  if (!(r.gemm_dim_half >= 0) || !std::isfinite(r.gemm_dim_half) || !(r.gemm_tile >= 1) ||
      !std::isfinite(r.gemm_tile) || !(r.host_run_ahead_s >= 0)) {
    return bad_cluster_field("gpu.roofline", "constants must not be negative or NaN");
  }
  // Host costs are per kernel, per micro-batch and per iteration: a second
  // (an hour per iteration) is far beyond any real value and keeps every
  // sum of them finite.
  if (!seconds(r.kernel_overhead_s, 1.0)) {
    return bad_cluster_field("gpu.roofline.kernel_overhead_s", "must be between 0 and 1 s");
  }
  if (!seconds(r.microbatch_overhead_s, 1.0)) {
    return bad_cluster_field("gpu.roofline.microbatch_overhead_s", "must be between 0 and 1 s");
  }
  if (!seconds(r.iteration_overhead_s, 3600.0)) {
    return bad_cluster_field("gpu.roofline.iteration_overhead_s", "must be between 0 and 3600 s");
  }
  const RooflineCeilings& ceil = c.gpu.ceilings;
  if (!fraction(ceil.gemm_efficiency) || !fraction(ceil.fp8_gemm_efficiency) ||
      !fraction(ceil.fp4_gemm_efficiency) ||
      !fraction(ceil.memory_efficiency) ||
      !fraction(ceil.flash_attention_efficiency)) {
    return bad_cluster_field("gpu.ceilings", "efficiency ceilings must be in (0, 1]");
  }
  return Status();
}

}  // namespace

Status validate(const Cluster& c) {
  LLMPLAN_RETURN_IF_ERROR(validate_cluster_shape(c));
  LLMPLAN_RETURN_IF_ERROR(validate_cluster_roofline(c));
  Status valid = validate(c.gpu.validation);
  if (!valid.ok()) return valid.with_prefix("cluster.gpu");
  const NetworkConstants& n = c.network;
  if (!fraction(n.nvlink_efficiency) || !fraction(n.nic_efficiency) ||
      !fraction(n.nvlink_a2a_efficiency)) {
    return bad_cluster_field("network", "efficiencies must be in (0, 1]");
  }
  // A per-hop latency of a second is a million times a real one.
  if (!seconds(n.nvlink_latency_s, 1.0)) {
    return bad_cluster_field("network.nvlink_latency_s", "must be between 0 and 1 s");
  }
  if (!seconds(n.nic_latency_s, 1.0)) {
    return bad_cluster_field("network.nic_latency_s", "must be between 0 and 1 s");
  }
  Status curves = validate(c.collectives);
  if (!curves.ok()) return curves.with_prefix("cluster.collectives");
  if (!(c.usd_per_gpu_hour >= 0) || !std::isfinite(c.usd_per_gpu_hour)) {
    return bad_cluster_field("usd_per_gpu_hour", "must not be negative");
  }
  return Status();
}

namespace {

// Quantiles as GpuValidation describes them; `field` names them in errors.
Status check_quantiles(const std::vector<std::pair<double, double>>& quantiles,
                       const std::string& field) {
  auto bad = [](const std::string& f, const std::string& why) {
    return Status::invalid_argument("validation." + f + ": " + why);
  };
  if (quantiles.size() > kMaxValidationQuantiles) {
    return bad(field, "at most " + std::to_string(kMaxValidationQuantiles) + " entries");
  }
  for (size_t i = 0; i < quantiles.size(); ++i) {
    const auto [p, ratio] = quantiles[i];
    const std::string at = field + "[" + std::to_string(i) + "]";
    if (!(p > 0 && p < 1)) return bad(at + ".p", "must be in (0, 1)");
    if (!(ratio > 0) || !std::isfinite(ratio)) return bad(at + ".ratio", "must be positive");
    if (i > 0 && !(p > quantiles[i - 1].first)) {
      return bad(at + ".p", "probabilities must be strictly increasing");
    }
    if (i > 0 && ratio < quantiles[i - 1].second) {
      return bad(at + ".ratio", "ratios must not decrease as the probability grows");
    }
  }
  return Status();
}

}  // namespace

Status validate(const GpuValidation& v) {
  auto bad = [](const std::string& field, const std::string& why) {
    return Status::invalid_argument("validation." + field + ": " + why);
  };
  if (!(v.min_mfu >= 0 && v.min_mfu <= 1)) return bad("min_mfu", "must be in [0, 1]");
  if (!(v.max_mfu >= 0 && v.max_mfu <= 1)) return bad("max_mfu", "must be in [0, 1]");
  if (v.min_mfu > v.max_mfu) return bad("min_mfu", "must not exceed max_mfu");
  if (!(v.max_mfu_fp8 >= 0 && v.max_mfu_fp8 <= 1)) return bad("max_mfu_fp8", "must be in [0, 1]");
  if (!(v.max_mfu_fp4 >= 0 && v.max_mfu_fp4 <= 1)) return bad("max_mfu_fp4", "must be in [0, 1]");
  if (v.quantiles.size() > kMaxValidationQuantiles) {
    return bad("quantiles", "at most " + std::to_string(kMaxValidationQuantiles) + " entries");
  }
  if (!v.quantiles.empty() && !v.calibrated) {
    return bad("quantiles", "an uncalibrated GPU has no error distribution");
  }
  if (!v.quantiles.empty() && v.samples < 1) return bad("samples", "must be at least 1");
  if (v.samples < 0) return bad("samples", "must not be negative");
  LLMPLAN_RETURN_IF_ERROR(check_quantiles(v.quantiles, "quantiles"));
  if (!v.groups.empty() && v.quantiles.empty()) {
    return bad("groups", "groups need the pooled quantiles too");
  }
  if (v.groups.size() > kMaxBandGroups) {
    return bad("groups", "at most " + std::to_string(kMaxBandGroups) + " entries");
  }
  for (size_t i = 0; i < v.groups.size(); ++i) {
    const GpuValidation::Group& g = v.groups[i];
    const std::string at = "groups[" + std::to_string(i) + "]";
    if (!is_band_group_key(g.key)) {
      return bad(at + ".key", "\"" + g.key +
                                  "\" is not a group of llmplan's band (simulator/error_band.h)");
    }
    for (size_t j = 0; j < i; ++j) {
      if (v.groups[j].key == g.key) return bad(at + ".key", "\"" + g.key + "\" given twice");
    }
    if (g.samples < 1 || g.samples > v.samples) {
      return bad(at + ".samples", "must be in [1, samples]");
    }
    if (g.quantiles.empty()) return bad(at + ".quantiles", "must not be empty");
    LLMPLAN_RETURN_IF_ERROR(check_quantiles(g.quantiles, at + ".quantiles"));
  }
  return Status();
}

}  // namespace llmplan::simulator

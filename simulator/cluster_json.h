// JSON forms of the hardware values in cluster.h: GpuSpec (with its
// RooflineConstants), NetworkConstants and Cluster.
//
// GPU fields: name, peak_bf16_flops, peak_fp16_flops, hbm_bytes,
//   hbm_bytes_per_s, nvlink_bytes_per_s, tdp_w (numbers > 0), num_sms
//   (integer >= 1), peak_fp8_flops (>= 0; absent or 0: no FP8),
//   fp8_block_scaling (bool: MXFP8), roofline (object, below).
// Roofline fields: gemm_efficiency, fp8_gemm_efficiency, flash_attention_efficiency,
//   memory_efficiency (in (0, 1]), gemm_dim_half (>= 0), gemm_tile (>= 1),
//   kernel_overhead_s, microbatch_overhead_s, iteration_overhead_s (>= 0),
//   host_run_ahead_s (>= 0; absent: no limit), ssd_scan_efficiency (in [0, 1];
//   absent or 0: flash_attention_efficiency).
// GPU fields also: ceilings (object: gemm_efficiency, fp8_gemm_efficiency, memory_efficiency,
//   flash_attention_efficiency in (0, 1]; source string) and validation
//   (object, replaced whole: calibrated (bool, required), min_mfu, max_mfu
//   (in [0, 1]), flash_attention (bool), source (string), held_out_error
//   (object: samples (integer >= 1, required), source, quantiles (required,
//   1 to 99 objects {"p": in (0, 1), "ratio": > 0}, p strictly increasing,
//   ratio non-decreasing)); only a calibrated GPU may carry held_out_error).
//   A GPU without validation is uncalibrated; so is a calibrated GPU whose
//   roofline is overridden by an object that brings no validation of its own.
// Network fields: nvlink_latency_s, nic_latency_s (>= 0), nvlink_efficiency,
//   nic_efficiency, nvlink_a2a_efficiency (in (0, 1]; the last 1 by default).
// Cluster nvlink_domain_gpus (>= 0; 0 = the node) is the NVLink domain size.
// Cluster fields: name, gpu (a GPU preset name, or an object of GPU fields
//   that may start from {"preset": NAME}), gpus_per_node (>= 1), nodes (>= 0;
//   0 = as many as needed), nic_bytes_per_s (> 0), network (object),
//   collectives (a collectives preset name, an object, or null for none),
//   price (a price preset name) or usd_per_gpu_hour (>= 0; 0 = unknown).
// Collectives fields (measured in-node curves, collective_curve.h): name,
//   all_reduce (array of {group_size (>= 2), bytes, seconds (arrays of
//   numbers > 0 of equal length, bytes strictly increasing)}; each may carry
//   "source"/"note").
//
// Numbers may be bare or {"value": X, "source": "..."}. In every object the
// documentation keys "source", "note" and "description" are accepted and
// ignored; any other unknown key is an error.
#ifndef LLMPLAN_SIMULATOR_CLUSTER_JSON_H_
#define LLMPLAN_SIMULATOR_CLUSTER_JSON_H_

#include <boost/json.hpp>
#include <functional>
#include <string>

#include "simulator/cluster.h"
#include "base/status.h"

namespace llmplan::simulator {

// Resolves the preset names a cluster object may use ("gpu": "h100-sxm",
// "price": "aws-p5-2025"). The preset catalog provides one; an empty
// function makes such a name an error. Each function returns the value or
// an error (typically NotFound listing the known names).
struct ClusterPresetLookup {
  std::function<Result<GpuSpec>(const std::string& name)> gpu;
  std::function<Result<double>(const std::string& name)> usd_per_gpu_hour;
  std::function<Result<MeasuredCollectives>(const std::string& name)> collectives;
};

// Each apply_* applies the fields present in the JSON object `v` onto *out,
// leaving the others unchanged (a preset overridden field by field). `path`
// names the object in messages ("cluster.json: cluster.gpu").
//
// Returns InvalidArgument naming path.field for an unknown key, a wrong type
// or a value out of range; a preset name the lookup does not know comes back
// with the lookup's error, prefixed by path.field. Single fields only:
// validate(Cluster) checks the whole. On error *out is left unchanged.
// Thread-safe when the lookup functions are.
Status apply_roofline_json(const boost::json::value& v, const std::string& path,
                           RooflineConstants* out);
Status apply_network_json(const boost::json::value& v, const std::string& path,
                          NetworkConstants* out);
Status apply_ceilings_json(const boost::json::value& v, const std::string& path,
                           RooflineCeilings* out);
Status apply_validation_json(const boost::json::value& v, const std::string& path,
                             GpuValidation* out);
Status apply_gpu_json(const boost::json::value& v, const std::string& path, GpuSpec* out);
// Replaces *out with the collectives object `v` (whole, not field by field);
// validate(MeasuredCollectives) is applied.
Status apply_collectives_json(const boost::json::value& v, const std::string& path,
                              MeasuredCollectives* out);
Status apply_cluster_json(const boost::json::value& v, const std::string& path,
                          const ClusterPresetLookup& lookup, Cluster* out);
// As above with no preset names allowed (gpu must be an inline object, the
// price a number).
Status apply_cluster_json(const boost::json::value& v, const std::string& path, Cluster* out);

// Every field as a JSON object that the matching apply_* reads back to an
// equal value. A cluster is written self-contained: its GPU inline and its
// price as usd_per_gpu_hour.
boost::json::value roofline_to_json(const RooflineConstants& roofline);
boost::json::value ceilings_to_json(const RooflineCeilings& ceilings);
boost::json::value validation_to_json(const GpuValidation& validation);
boost::json::value network_to_json(const NetworkConstants& network);
boost::json::value gpu_to_json(const GpuSpec& gpu);
boost::json::value collectives_to_json(const MeasuredCollectives& collectives);
// The collectives are written inline, and only when the cluster has some.
boost::json::value cluster_to_json(const Cluster& cluster);

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_CLUSTER_JSON_H_

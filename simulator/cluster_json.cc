#include "simulator/cluster_json.h"

#include <cmath>
#include <sstream>
#include <vector>

#include "base/number_text.h"
#include "base/strict_json.h"

namespace llmplan::simulator {
namespace {

// Reads a number that must be > 0.
void read_positive(json::JsonObjectReader* r, std::string_view key, double* out) {
  double x = *out;
  const bool had = r->has(key);
  r->read_double(key, &x);
  if (!had || !r->status().ok()) return;
  if (!(x > 0)) {
    r->fail(key, "must be positive, got " + number_text(x));
    return;
  }
  *out = x;
}

// Reads a number in (0, 1].
void read_fraction(json::JsonObjectReader* r, std::string_view key, double* out) {
  double x = *out;
  const bool had = r->has(key);
  r->read_double(key, &x);
  if (!had || !r->status().ok()) return;
  if (!(x > 0 && x <= 1)) {
    r->fail(key, "must be in (0, 1], got " + number_text(x));
    return;
  }
  *out = x;
}

// Reads a number in [lo, hi]; `unit` (" s", or "") follows the bounds.
void read_in_range(json::JsonObjectReader* r, std::string_view key, double lo, double hi,
                   std::string_view unit, double* out) {
  double x = *out;
  const bool had = r->has(key);
  r->read_double(key, &x);
  if (!had || !r->status().ok()) return;
  if (!(x >= lo && x <= hi)) {
    r->fail(key, unit.empty() ? "must be in [" + number_text(lo) + ", " + number_text(hi) +
                                    "], got " + number_text(x)
                              : "must be between " + number_text(lo) + " and " + number_text(hi) +
                                    std::string(unit) + ", got " + number_text(x));
    return;
  }
  *out = x;
}

void ignore_documentation(json::JsonObjectReader* r) {
  r->ignore("source");
  r->ignore("note");
  r->ignore("description");
}

// The GPU of a cluster: a preset name, or an object (optionally starting
// from {"preset": NAME}).
Status apply_cluster_gpu(const boost::json::value& v, const std::string& path,
                         const ClusterPresetLookup& lookup, GpuSpec* out) {
  auto resolve = [&](const std::string& name, const std::string& where) -> Result<GpuSpec> {
    if (!lookup.gpu) {
      return Status::invalid_argument(where +
                                      ": GPU preset names need the preset catalog; "
                                      "give the GPU's fields inline");
    }
    Result<GpuSpec> g = lookup.gpu(name);
    if (!g.ok()) return g.status().with_prefix(where);
    return g;
  };
  if (v.is_string()) {
    LLMPLAN_ASSIGN_OR_RETURN(*out, resolve(std::string(v.get_string()), path));
    return Status();
  }
  if (!v.is_object()) {
    return Status::invalid_argument(path + ": expected a GPU preset name or an object");
  }
  const boost::json::object& o = v.get_object();
  auto it = o.find("preset");
  if (it == o.end()) return apply_gpu_json(v, path, out);
  if (!it->value().is_string()) {
    return Status::invalid_argument(path + ".preset: expected a GPU preset name (a string)");
  }
  LLMPLAN_ASSIGN_OR_RETURN(GpuSpec gpu,
                           resolve(std::string(it->value().get_string()), path + ".preset"));
  boost::json::object rest = o;
  rest.erase("preset");
  LLMPLAN_RETURN_IF_ERROR(apply_gpu_json(rest, path, &gpu));
  *out = std::move(gpu);
  return Status();
}

// An array of numbers > 0.
Status read_positive_array(const boost::json::value* v, const std::string& path,
                           std::vector<double>* out) {
  if (v == nullptr) return Status::invalid_argument(path + ": missing required field");
  if (!v->is_array()) return Status::invalid_argument(path + ": expected an array of numbers");
  out->clear();
  const boost::json::array& a = v->get_array();
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_number() || !(a[i].to_number<double>() > 0)) {
      return Status::invalid_argument(path + "[" + std::to_string(i) +
                                      "]: expected a positive number");
    }
    out->push_back(a[i].to_number<double>());
  }
  return Status();
}

}  // namespace

Status apply_collectives_json(const boost::json::value& v, const std::string& path,
                              MeasuredCollectives* out) {
  MeasuredCollectives m;
  json::JsonObjectReader r(v, path);
  r.read_string("name", &m.name);
  const boost::json::value* all_reduce = r.child("all_reduce");
  ignore_documentation(&r);
  LLMPLAN_RETURN_IF_ERROR(r.finish());
  if (all_reduce != nullptr) {
    const std::string list_path = r.field_path("all_reduce");
    if (!all_reduce->is_array()) return Status::invalid_argument(list_path + ": expected an array");
    const boost::json::array& items = all_reduce->get_array();
    for (size_t i = 0; i < items.size(); ++i) {
      const std::string at = list_path + "[" + std::to_string(i) + "]";
      InNodeCurve c;
      json::JsonObjectReader cr(items[i], at);
      cr.read_int("group_size", &c.group_size, /*required=*/true, 2);
      const boost::json::value* bytes = cr.child("bytes", true);
      const boost::json::value* seconds = cr.child("seconds", true);
      ignore_documentation(&cr);
      LLMPLAN_RETURN_IF_ERROR(cr.finish());
      LLMPLAN_RETURN_IF_ERROR(read_positive_array(bytes, cr.field_path("bytes"), &c.curve.bytes));
      LLMPLAN_RETURN_IF_ERROR(
          read_positive_array(seconds, cr.field_path("seconds"), &c.curve.seconds));
      m.all_reduce.push_back(std::move(c));
    }
  }
  Status valid = validate(m);
  if (!valid.ok()) return valid.with_prefix(path);
  *out = std::move(m);
  return Status();
}

Status apply_roofline_json(const boost::json::value& v, const std::string& path,
                           RooflineConstants* out) {
  RooflineConstants c = *out;
  json::JsonObjectReader r(v, path);
  read_fraction(&r, "gemm_efficiency", &c.gemm_efficiency);
  read_fraction(&r, "fp8_gemm_efficiency", &c.fp8_gemm_efficiency);
  read_fraction(&r, "fp4_gemm_efficiency", &c.fp4_gemm_efficiency);
  // Every constant has a stated range, checked here so that the error names
  // this file and field (not the first case that uses it): the host costs as
  // validate() bounds them (a second per kernel or micro-batch, an hour per
  // iteration, far beyond any real value); the GEMM shape constants in
  // elements, up to 64Ki and 4Ki (the presets hold 0 to 1,032 and 128).
  read_in_range(&r, "gemm_dim_half", 0, 65536, "", &c.gemm_dim_half);
  read_in_range(&r, "gemm_tile", 1, 4096, "", &c.gemm_tile);
  read_fraction(&r, "flash_attention_efficiency", &c.flash_attention_efficiency);
  read_fraction(&r, "memory_efficiency", &c.memory_efficiency);
  read_in_range(&r, "kernel_overhead_s", 0, 1, " s", &c.kernel_overhead_s);
  read_in_range(&r, "host_run_ahead_s", 0, 3600, " s", &c.host_run_ahead_s);
  read_in_range(&r, "microbatch_overhead_s", 0, 1, " s", &c.microbatch_overhead_s);
  read_in_range(&r, "iteration_overhead_s", 0, 3600, " s", &c.iteration_overhead_s);
  // The fraction of an overlapped collective's hidden time added to compute.
  read_in_range(&r, "comm_compute_slowdown", 0, 1, "", &c.comm_compute_slowdown);
  read_fraction(&r, "pytorch_fsdp_efficiency", &c.pytorch_fsdp_efficiency);
  read_in_range(&r, "grouped_gemm_expert_overhead_s", 0, 1, " s", &c.grouped_gemm_expert_overhead_s);
  // 0: the cluster's.
  read_in_range(&r, "moe_a2a_efficiency", 0, 1, "", &c.moe_a2a_efficiency);
  read_in_range(&r, "moe_a2a_nic_efficiency", 0, 1, "", &c.moe_a2a_nic_efficiency);
  read_in_range(&r, "ssd_scan_efficiency", 0, 1, "", &c.ssd_scan_efficiency);
  ignore_documentation(&r);
  LLMPLAN_RETURN_IF_ERROR(r.finish());
  *out = c;
  return Status();
}

Status apply_network_json(const boost::json::value& v, const std::string& path,
                          NetworkConstants* out) {
  NetworkConstants n = *out;
  json::JsonObjectReader r(v, path);
  read_in_range(&r, "nvlink_latency_s", 0, 1, " s", &n.nvlink_latency_s);
  read_in_range(&r, "nic_latency_s", 0, 1, " s", &n.nic_latency_s);
  read_fraction(&r, "nvlink_efficiency", &n.nvlink_efficiency);
  read_fraction(&r, "nic_efficiency", &n.nic_efficiency);
  read_fraction(&r, "nvlink_a2a_efficiency", &n.nvlink_a2a_efficiency);
  ignore_documentation(&r);
  LLMPLAN_RETURN_IF_ERROR(r.finish());
  *out = n;
  return Status();
}

Status apply_ceilings_json(const boost::json::value& v, const std::string& path,
                           RooflineCeilings* out) {
  RooflineCeilings c = *out;
  json::JsonObjectReader r(v, path);
  read_fraction(&r, "gemm_efficiency", &c.gemm_efficiency);
  read_fraction(&r, "fp8_gemm_efficiency", &c.fp8_gemm_efficiency);
  read_fraction(&r, "fp4_gemm_efficiency", &c.fp4_gemm_efficiency);
  read_fraction(&r, "memory_efficiency", &c.memory_efficiency);
  read_fraction(&r, "flash_attention_efficiency", &c.flash_attention_efficiency);
  r.read_string("source", &c.source);
  r.ignore("note");
  r.ignore("description");
  LLMPLAN_RETURN_IF_ERROR(r.finish());
  *out = std::move(c);
  return Status();
}

// A non-empty array of {"p", "ratio"} at `qpath`.
static Status read_quantiles(const boost::json::value& quantiles, const std::string& qpath,
                             std::vector<std::pair<double, double>>* out) {
  if (!quantiles.is_array() || quantiles.get_array().empty()) {
    return Status::invalid_argument(qpath + ": expected a non-empty array of {\"p\", \"ratio\"}");
  }
  const boost::json::array& a = quantiles.get_array();
  if (a.size() > kMaxValidationQuantiles) {
    return Status::invalid_argument(qpath + ": at most " +
                                    std::to_string(kMaxValidationQuantiles) + " quantiles");
  }
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string at = qpath + "[" + std::to_string(i) + "]";
    double p = 0, ratio = 0;
    json::JsonObjectReader q(a[i], at);
    q.read_double("p", &p, /*required=*/true);
    q.read_double("ratio", &ratio, /*required=*/true);
    LLMPLAN_RETURN_IF_ERROR(q.finish());
    out->emplace_back(p, ratio);
  }
  return Status();
}

Status apply_validation_json(const boost::json::value& v, const std::string& path,
                             GpuValidation* out) {
  // A validation object replaces the whole: a GPU's accuracy is one claim.
  GpuValidation g;
  json::JsonObjectReader r(v, path);
  r.read_bool("calibrated", &g.calibrated, /*required=*/true);
  r.read_double("min_mfu", &g.min_mfu, false, 0.0);
  r.read_double("max_mfu", &g.max_mfu, false, 0.0);
  r.read_double("max_mfu_fp8", &g.max_mfu_fp8, false, 0.0);
  r.read_double("max_mfu_fp4", &g.max_mfu_fp4, false, 0.0);
  r.read_bool("flash_attention", &g.flash_attention);
  r.read_string("source", &g.source);
  r.read_string("derived_from", &g.derived_from);
  const boost::json::value* held_out = r.child("held_out_error");
  r.ignore("note");
  r.ignore("description");
  LLMPLAN_RETURN_IF_ERROR(r.finish());
  if (held_out != nullptr) {
    json::JsonObjectReader h(*held_out, r.field_path("held_out_error"));
    h.read_int("samples", &g.samples, /*required=*/true, 1);
    h.read_string("source", &g.held_out_source);
    const boost::json::value* quantiles = h.child("quantiles", /*required=*/true);
    const boost::json::value* groups = h.child("groups");
    h.ignore("note");
    h.ignore("description");
    LLMPLAN_RETURN_IF_ERROR(h.finish());
    LLMPLAN_RETURN_IF_ERROR(read_quantiles(*quantiles, h.field_path("quantiles"), &g.quantiles));
    if (groups != nullptr) {
      const std::string gpath = h.field_path("groups");
      if (!groups->is_array()) {
        return Status::invalid_argument(gpath + ": expected an array of {\"key\", \"samples\", "
                                        "\"quantiles\"}");
      }
      const boost::json::array& a = groups->get_array();
      if (a.size() > kMaxBandGroups) {
        return Status::invalid_argument(gpath + ": at most " + std::to_string(kMaxBandGroups) +
                                        " groups");
      }
      for (size_t i = 0; i < a.size(); ++i) {
        GpuValidation::Group group;
        json::JsonObjectReader gr(a[i], gpath + "[" + std::to_string(i) + "]");
        gr.read_string("key", &group.key, /*required=*/true);
        gr.read_int("samples", &group.samples, /*required=*/true, 1);
        const boost::json::value* q = gr.child("quantiles", /*required=*/true);
        LLMPLAN_RETURN_IF_ERROR(gr.finish());
        LLMPLAN_RETURN_IF_ERROR(read_quantiles(*q, gr.field_path("quantiles"), &group.quantiles));
        g.groups.push_back(std::move(group));
      }
    }
  }
  Status valid = validate(g);
  if (!valid.ok()) {
    // validate() names "validation.<field>"; name the file's path instead.
    const std::string prefix = "validation.";
    std::string m = valid.message();
    if (m.rfind(prefix, 0) == 0) m = m.substr(prefix.size());
    return Status::invalid_argument(path + "." + m);
  }
  *out = std::move(g);
  return Status();
}

Status apply_gpu_json(const boost::json::value& v, const std::string& path, GpuSpec* out) {
  GpuSpec g = *out;
  json::JsonObjectReader r(v, path);
  r.read_string("name", &g.name);
  read_positive(&r, "peak_bf16_flops", &g.peak_bf16_flops);
  read_positive(&r, "peak_fp16_flops", &g.peak_fp16_flops);
  r.read_double("peak_fp8_flops", &g.peak_fp8_flops, false, 0.0);
  r.read_bool("fp8_block_scaling", &g.fp8_block_scaling);
  r.read_double("peak_fp4_flops", &g.peak_fp4_flops, false, 0.0);
  read_positive(&r, "hbm_bytes", &g.hbm_bytes);
  read_positive(&r, "hbm_bytes_per_s", &g.hbm_bytes_per_s);
  read_positive(&r, "nvlink_bytes_per_s", &g.nvlink_bytes_per_s);
  read_positive(&r, "tdp_w", &g.tdp_w);
  r.read_int("num_sms", &g.num_sms, false, 1);
  const boost::json::value* roofline = r.child("roofline");
  const boost::json::value* ceilings = r.child("ceilings");
  const boost::json::value* validation = r.child("validation");
  ignore_documentation(&r);
  LLMPLAN_RETURN_IF_ERROR(r.finish());
  if (roofline != nullptr) {
    LLMPLAN_RETURN_IF_ERROR(apply_roofline_json(*roofline, r.field_path("roofline"), &g.roofline));
  }
  if (ceilings != nullptr) {
    LLMPLAN_RETURN_IF_ERROR(apply_ceilings_json(*ceilings, r.field_path("ceilings"), &g.ceilings));
  }
  if (validation != nullptr) {
    LLMPLAN_RETURN_IF_ERROR(
        apply_validation_json(*validation, r.field_path("validation"), &g.validation));
  } else if (roofline != nullptr && g.validation.calibrated) {
    // Constants changed without a validation of their own: the preset's
    // accuracy claim no longer holds for them.
    g.validation = GpuValidation{};
    g.validation.source = "Roofline constants overridden at " + r.field_path("roofline") +
                          " without a validation: uncalibrated";
  }
  *out = std::move(g);
  return Status();
}

Status apply_cluster_json(const boost::json::value& v, const std::string& path,
                          const ClusterPresetLookup& lookup, Cluster* out) {
  Cluster c = *out;
  json::JsonObjectReader r(v, path);
  r.read_string("name", &c.name);
  const boost::json::value* gpu = r.child("gpu");
  r.read_int("gpus_per_node", &c.gpus_per_node, false, 1);
  r.read_int("nvlink_domain_gpus", &c.nvlink_domain_gpus, false, 0);
  r.read_int("nodes", &c.num_nodes, false, 0);
  read_positive(&r, "nic_bytes_per_s", &c.nic_bytes_per_s);
  read_positive(&r, "host_link_bytes_per_s", &c.host_link_bytes_per_s);
  const boost::json::value* network = r.child("network");
  const boost::json::value* collectives = r.child("collectives");
  std::string price;
  const bool has_price = r.has("price");
  r.read_string("price", &price);
  if (has_price && r.has("usd_per_gpu_hour")) {
    r.fail("price", "give either a price preset or usd_per_gpu_hour, not both");
  }
  r.read_double("usd_per_gpu_hour", &c.usd_per_gpu_hour, false, 0.0);
  ignore_documentation(&r);
  LLMPLAN_RETURN_IF_ERROR(r.finish());
  if (gpu != nullptr) {
    LLMPLAN_RETURN_IF_ERROR(apply_cluster_gpu(*gpu, r.field_path("gpu"), lookup, &c.gpu));
  }
  if (network != nullptr) {
    LLMPLAN_RETURN_IF_ERROR(apply_network_json(*network, r.field_path("network"), &c.network));
  }
  if (collectives != nullptr) {
    const std::string at = r.field_path("collectives");
    if (collectives->is_null()) {
      c.collectives = MeasuredCollectives{};
    } else if (collectives->is_string()) {
      if (!lookup.collectives) {
        return Status::invalid_argument(at +
                                        ": collectives preset names need the preset catalog; "
                                        "give the curves inline");
      }
      Result<MeasuredCollectives> m = lookup.collectives(std::string(collectives->get_string()));
      if (!m.ok()) return m.status().with_prefix(at);
      c.collectives = std::move(m).value();
    } else {
      LLMPLAN_RETURN_IF_ERROR(apply_collectives_json(*collectives, at, &c.collectives));
    }
  }
  if (has_price) {
    if (!lookup.usd_per_gpu_hour) {
      return Status::invalid_argument(r.field_path("price") +
                                      ": price preset names need the preset catalog; give "
                                      "usd_per_gpu_hour instead");
    }
    Result<double> usd = lookup.usd_per_gpu_hour(price);
    if (!usd.ok()) return usd.status().with_prefix(r.field_path("price"));
    c.usd_per_gpu_hour = *usd;
  }
  *out = std::move(c);
  return Status();
}

Status apply_cluster_json(const boost::json::value& v, const std::string& path, Cluster* out) {
  return apply_cluster_json(v, path, ClusterPresetLookup{}, out);
}

boost::json::value roofline_to_json(const RooflineConstants& c) {
  boost::json::object o;
  o["gemm_efficiency"] = c.gemm_efficiency;
  o["gemm_dim_half"] = c.gemm_dim_half;
  o["gemm_tile"] = c.gemm_tile;
  o["fp8_gemm_efficiency"] = c.fp8_gemm_efficiency;
  // Written only when set (FP4 GPUs): the default reads back the same.
  if (c.fp4_gemm_efficiency != RooflineConstants{}.fp4_gemm_efficiency) {
    o["fp4_gemm_efficiency"] = c.fp4_gemm_efficiency;
  }
  o["flash_attention_efficiency"] = c.flash_attention_efficiency;
  o["memory_efficiency"] = c.memory_efficiency;
  o["kernel_overhead_s"] = c.kernel_overhead_s;
  o["microbatch_overhead_s"] = c.microbatch_overhead_s;
  o["iteration_overhead_s"] = c.iteration_overhead_s;
  o["comm_compute_slowdown"] = c.comm_compute_slowdown;
  o["pytorch_fsdp_efficiency"] = c.pytorch_fsdp_efficiency;
  if (std::isfinite(c.host_run_ahead_s)) o["host_run_ahead_s"] = c.host_run_ahead_s;
  // MoE constants: written only when set (the defaults read back the same).
  if (c.grouped_gemm_expert_overhead_s != 0) {
    o["grouped_gemm_expert_overhead_s"] = c.grouped_gemm_expert_overhead_s;
  }
  if (c.moe_a2a_efficiency != 0) o["moe_a2a_efficiency"] = c.moe_a2a_efficiency;
  if (c.moe_a2a_nic_efficiency != 0) o["moe_a2a_nic_efficiency"] = c.moe_a2a_nic_efficiency;
  // Hybrid constant: written only when set, like the MoE ones.
  if (c.ssd_scan_efficiency != 0) o["ssd_scan_efficiency"] = c.ssd_scan_efficiency;
  return o;
}

boost::json::value ceilings_to_json(const RooflineCeilings& c) {
  boost::json::object o;
  o["gemm_efficiency"] = c.gemm_efficiency;
  o["fp8_gemm_efficiency"] = c.fp8_gemm_efficiency;
  if (c.fp4_gemm_efficiency != RooflineCeilings{}.fp4_gemm_efficiency) {
    o["fp4_gemm_efficiency"] = c.fp4_gemm_efficiency;
  }
  o["memory_efficiency"] = c.memory_efficiency;
  o["flash_attention_efficiency"] = c.flash_attention_efficiency;
  if (!c.source.empty()) o["source"] = c.source;
  return o;
}

boost::json::value validation_to_json(const GpuValidation& v) {
  boost::json::object o;
  o["calibrated"] = v.calibrated;
  o["min_mfu"] = v.min_mfu;
  o["max_mfu"] = v.max_mfu;
  if (v.max_mfu_fp8 > 0) o["max_mfu_fp8"] = v.max_mfu_fp8;
  if (v.max_mfu_fp4 > 0) o["max_mfu_fp4"] = v.max_mfu_fp4;
  o["flash_attention"] = v.flash_attention;
  if (!v.source.empty()) o["source"] = v.source;
  if (!v.derived_from.empty()) o["derived_from"] = v.derived_from;
  if (!v.quantiles.empty()) {
    boost::json::object h;
    h["samples"] = v.samples;
    if (!v.held_out_source.empty()) h["source"] = v.held_out_source;
    boost::json::array q;
    for (const auto& [p, ratio] : v.quantiles) {
      q.push_back(boost::json::object{{"p", p}, {"ratio", ratio}});
    }
    h["quantiles"] = std::move(q);
    if (!v.groups.empty()) {
      boost::json::array groups;
      for (const GpuValidation::Group& g : v.groups) {
        boost::json::array gq;
        for (const auto& [p, ratio] : g.quantiles) {
          gq.push_back(boost::json::object{{"p", p}, {"ratio", ratio}});
        }
        groups.push_back(
            boost::json::object{{"key", g.key}, {"samples", g.samples}, {"quantiles", gq}});
      }
      h["groups"] = std::move(groups);
    }
    o["held_out_error"] = std::move(h);
  }
  return o;
}

boost::json::value network_to_json(const NetworkConstants& n) {
  boost::json::object o;
  o["nvlink_latency_s"] = n.nvlink_latency_s;
  o["nic_latency_s"] = n.nic_latency_s;
  o["nvlink_efficiency"] = n.nvlink_efficiency;
  o["nic_efficiency"] = n.nic_efficiency;
  if (n.nvlink_a2a_efficiency != NetworkConstants{}.nvlink_a2a_efficiency) {
    o["nvlink_a2a_efficiency"] = n.nvlink_a2a_efficiency;
  }
  return o;
}

boost::json::value gpu_to_json(const GpuSpec& g) {
  boost::json::object o;
  o["name"] = g.name;
  o["peak_bf16_flops"] = g.peak_bf16_flops;
  o["peak_fp16_flops"] = g.peak_fp16_flops;
  if (g.peak_fp8_flops > 0) o["peak_fp8_flops"] = g.peak_fp8_flops;
  if (g.fp8_block_scaling) o["fp8_block_scaling"] = true;
  if (g.peak_fp4_flops > 0) o["peak_fp4_flops"] = g.peak_fp4_flops;
  o["hbm_bytes"] = g.hbm_bytes;
  o["hbm_bytes_per_s"] = g.hbm_bytes_per_s;
  o["nvlink_bytes_per_s"] = g.nvlink_bytes_per_s;
  if (g.tdp_w > 0) o["tdp_w"] = g.tdp_w;  // 0: not given (read_positive refuses 0)
  o["num_sms"] = g.num_sms;
  o["roofline"] = roofline_to_json(g.roofline);
  if (g.ceilings != RooflineCeilings{}) o["ceilings"] = ceilings_to_json(g.ceilings);
  if (g.validation != GpuValidation{}) o["validation"] = validation_to_json(g.validation);
  return o;
}

boost::json::value collectives_to_json(const MeasuredCollectives& m) {
  boost::json::object o;
  o["name"] = m.name;
  boost::json::array curves;
  for (const InNodeCurve& c : m.all_reduce) {
    boost::json::object co;
    co["group_size"] = c.group_size;
    co["bytes"] = boost::json::array(c.curve.bytes.begin(), c.curve.bytes.end());
    co["seconds"] = boost::json::array(c.curve.seconds.begin(), c.curve.seconds.end());
    curves.push_back(std::move(co));
  }
  o["all_reduce"] = std::move(curves);
  return o;
}

boost::json::value cluster_to_json(const Cluster& c) {
  boost::json::object o;
  o["name"] = c.name;
  o["gpu"] = gpu_to_json(c.gpu);
  o["gpus_per_node"] = c.gpus_per_node;
  if (c.nvlink_domain_gpus > 0) o["nvlink_domain_gpus"] = c.nvlink_domain_gpus;
  o["nodes"] = c.num_nodes;
  o["nic_bytes_per_s"] = c.nic_bytes_per_s;
  if (c.host_link_bytes_per_s > 0) o["host_link_bytes_per_s"] = c.host_link_bytes_per_s;
  o["network"] = network_to_json(c.network);
  if (!c.collectives.empty() || !c.collectives.name.empty()) {
    o["collectives"] = collectives_to_json(c.collectives);
  }
  o["usd_per_gpu_hour"] = c.usd_per_gpu_hour;
  return o;
}

}  // namespace llmplan::simulator

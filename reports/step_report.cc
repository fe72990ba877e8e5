#include "reports/step_report.h"

#include <fmt/format.h>

#include "reports/format.h"
#include "reports/table.h"
#include "simulator/caveats.h"
#include "simulator/collectives.h"
#include "simulator/error_band.h"
#include "simulator/lowering.h"

namespace llmplan::reports {
namespace {

using simulator::StageBreakdown;
using simulator::StepReport;

std::vector<std::pair<const char*, double>> parts(const StageBreakdown& b,
                                                  simulator::Precision precision) {
  std::vector<std::pair<const char*, double>> out = {
      {"compute", b.compute_s},
      {"recompute", b.recompute_s},
      {"tensor-parallel comm", b.tp_comm_s},
      {"host overhead", b.host_overhead_s},
      {"pipeline transfers", b.pp_exposed_s},
      {"pipeline bubble", b.bubble_s},
      {"data-parallel comm (exposed)", b.dp_exposed_s},
      {"optimizer", b.optimizer_s}};
  // The parts of FP8, sharding and overlap, only when a plan has them.
  if (b.fp8_cast_s > 0) {
    out.push_back({precision == simulator::Precision::kNvfp4
                       ? "NVFP4 casts (amax + rowwise and columnwise cast)"
                       : "FP8 casts (cast + transpose + amax)",
                   b.fp8_cast_s});
  }
  if (b.fsdp_gather_exposed_s > 0) {
    out.push_back({"FSDP parameter gathers (exposed)", b.fsdp_gather_exposed_s});
  }
  if (b.fsdp_reduce_scatter_exposed_s > 0) {
    out.push_back({"FSDP gradient reduce-scatters (exposed)", b.fsdp_reduce_scatter_exposed_s});
  }
  if (b.cp_comm_s > 0) out.push_back({"context-parallel KV exchange (exposed)", b.cp_comm_s});
  if (b.moe_a2a_s > 0) {
    out.push_back({"MoE dispatch + combine all-to-all (exposed)", b.moe_a2a_s});
  }
  if (b.cpu_offload_s > 0) {
    out.push_back({"activation CPU offload / reload (exposed)", b.cpu_offload_s});
  }
  if (b.overlap_slowdown_s > 0) {
    out.push_back({"SM contention of overlapped comm", b.overlap_slowdown_s});
  }
  return out;
}

// Collective time hidden under compute (not parts of the end time).
std::vector<std::pair<const char*, double>> hidden(const StageBreakdown& b) {
  std::vector<std::pair<const char*, double>> out;
  if (b.tp_comm_hidden_s > 0) out.push_back({"tensor-parallel comm (hidden)", b.tp_comm_hidden_s});
  if (b.dp_comm_hidden_s > 0) out.push_back({"data-parallel comm (hidden)", b.dp_comm_hidden_s});
  if (b.fsdp_hidden_s > 0) {
    out.push_back({"FSDP gathers and reduce-scatters (hidden)", b.fsdp_hidden_s});
  }
  if (b.cp_comm_hidden_s > 0) {
    out.push_back({"context-parallel ring transfers (hidden)", b.cp_comm_hidden_s});
  }
  if (b.moe_a2a_hidden_s > 0) {
    out.push_back({"MoE all-to-alls (hidden)", b.moe_a2a_hidden_s});
  }
  return out;
}

Table breakdown_table(const StepReport& r, simulator::Precision precision) {
  Table t({"part", "seconds", "share"});
  for (const auto& [name, s] : parts(r.breakdown, precision)) {
    t.add_row({name, fmt::format("{:.4f}", s), percent(s / r.breakdown.end_s)});
  }
  return t;
}

// Empty when nothing overlaps.
Table hidden_table(const StepReport& r) {
  Table t({"overlapped with compute", "seconds"});
  for (const auto& [name, s] : hidden(r.breakdown)) t.add_row({name, fmt::format("{:.4f}", s)});
  return t;
}

Table stage_table(const StepReport& r) {
  Table t({"stage", "layers", "compute s", "recompute s", "tp s", "bubble s", "pp s", "dp s",
           "end s", "memory", "in flight"});
  for (const simulator::StageReport& s : r.stages) {
    const StageBreakdown& b = s.time;
    t.add_row({std::to_string(s.stage), std::to_string(s.layers),
               fmt::format("{:.3f}", b.compute_s), fmt::format("{:.3f}", b.recompute_s),
               fmt::format("{:.3f}", b.tp_comm_s), fmt::format("{:.3f}", b.bubble_s),
               fmt::format("{:.3f}", b.pp_exposed_s), fmt::format("{:.3f}", b.dp_exposed_s),
               fmt::format("{:.3f}", b.end_s), bytes_human(s.memory.total_bytes()),
               std::to_string(s.memory.in_flight_micro_batches)});
  }
  return t;
}

// Shows every stage when there are few, else the first, the critical and the last.
StepReport trimmed(const StepReport& r) {
  if (r.stages.size() <= 8) return r;
  StepReport out = r;
  out.stages.clear();
  for (size_t i = 0; i < r.stages.size(); ++i) {
    if (i == 0 || i == r.stages.size() - 1 || static_cast<int>(i) == r.critical_stage) {
      out.stages.push_back(r.stages[i]);
    }
  }
  return out;
}

std::string memory_line(const StepReport& r) {
  return fmt::format("{} of {} per GPU ({})", bytes_human(r.peak_memory_bytes),
                     bytes_human(r.memory_capacity_bytes),
                     r.fits_in_memory
                         ? "fits"
                         : "DOES NOT FIT: over by " + bytes_human(r.memory_overflow_bytes));
}

std::string header_lines(const SimulationView& v, const char* bullet) {
  const StepReport& r = v.report;
  std::string out;
  out += fmt::format("{}model: {} -- {} parameters, {} layers, hidden {}, {} heads ({} kv), seq {}\n",
                     bullet, v.model.name.empty() ? "custom" : v.model.name,
                     count_human(static_cast<double>(v.model.parameter_count())),
                     v.model.num_layers, v.model.hidden_size, v.model.num_heads,
                     v.model.kv_heads(), v.model.seq_length);
  if (v.model.is_moe()) {
    out += fmt::format(
        "{}experts: {} routed (top-{}) of FFN {}{} in {} of {} layers -- {} parameters active per "
        "token\n",
        bullet, v.model.num_experts, v.model.moe_top_k, v.model.moe_ffn_hidden(),
        v.model.moe_shared_experts > 0 ? fmt::format(", {} shared", v.model.moe_shared_experts)
                                       : std::string(),
        v.model.num_moe_layers(), v.model.num_layers,
        count_human(static_cast<double>(v.model.active_parameter_count())));
  }
  out += fmt::format("{}cluster: {} GPUs of {} ({}, {} per node{})\n", bullet, r.num_gpus,
                     v.cluster.gpu.name, v.cluster.name.empty() ? "custom" : v.cluster.name,
                     v.cluster.gpus_per_node,
                     v.cluster.nvlink_domain() != v.cluster.gpus_per_node
                         ? fmt::format(", NVLink domain {}", v.cluster.nvlink_domain())
                         : std::string());
  out += fmt::format("{}plan: {}\n", bullet, describe_plan(v.plan));
  const std::string links = placement_line(v.plan, v.cluster);
  if (!links.empty()) out += fmt::format("{}placement: {}\n", bullet, links);
  out += fmt::format("{}cost model: {}\n", bullet, r.cost_model);
  return out;
}

// Caveats as bullet lines, or "" when there are none.
std::string caveat_lines(const SimulationView& v, const char* bullet) {
  std::string out;
  for (const simulator::Caveat& c :
       simulator::caveat_list(v.report.caveats, v.cluster.gpu, v.report.mfu,
                                 v.plan.precision)) {
    out += fmt::format("{}{}: {}\n", bullet, c.code, c.text);
  }
  return out;
}

}  // namespace

bool shows_placement(const simulator::Plan& plan, const simulator::Cluster& cluster) {
  return plan.expert_parallel > 1 || cluster.nvlink_domain() != cluster.gpus_per_node;
}

std::string placement_line(const simulator::Plan& plan, const simulator::Cluster& cluster) {
  if (!shows_placement(plan, cluster)) return "";
  const simulator::Placement pl = simulator::place(plan, cluster);
  std::string s;
  for (const simulator::GroupLink& g : simulator::group_links(plan, pl)) {
    if (!s.empty()) s += "; ";
    s += simulator::describe_group_link(g, cluster.nvlink_domain());
  }
  if (plan.pipeline_parallel > 1) {
    if (!s.empty()) s += "; ";
    s += fmt::format("{} of {} pipeline boundaries cross a domain",
                     simulator::pipeline_domain_crossings(pl), plan.pipeline_parallel - 1);
  }
  return s;
}

std::string describe_plan(const simulator::Plan& p) {
  std::string s = fmt::format("tp {} x pp {} x dp {}", p.tensor_parallel, p.pipeline_parallel,
                              p.data_parallel);
  if (p.context_parallel > 1) {
    s += fmt::format(" x cp {} ({})", p.context_parallel,
                     p.cp_comm == simulator::CpComm::kP2p ? "ring attention" : "KV all-gather");
  }
  if (p.expert_parallel > 1 || p.expert_tensor_parallel > 1) {
    s += fmt::format(", experts ep {}", p.expert_parallel);
    if (p.expert_tensor_parallel > 1) s += fmt::format(" x etp {}", p.expert_tensor_parallel);
    if (p.moe_a2a_overlap) s += " (all-to-all overlapped)";
  }
  if (p.moe_imbalance != 1.0) s += fmt::format(", expert load imbalance {:.2f}", p.moe_imbalance);
  s += fmt::format(", micro batch {}, global batch {} ({} per replica), {}", p.micro_batch_size,
                   p.global_batch_size, p.num_micro_batches(), simulator::to_string(p.schedule));
  if (p.schedule == simulator::Schedule::kInterleaved) s += fmt::format(" (v={})", p.virtual_stages);
  s += fmt::format(", recompute {}", simulator::to_string(p.recompute));
  if (p.sequence_parallel) s += ", sequence parallel";
  const int zero = p.sharding_stage();
  if (zero == 1 && p.zero_stage == 0) {
    s += ", distributed optimizer";
  } else if (zero > 0) {
    s += fmt::format(", ZeRO-{}", zero);
  }
  if (zero > 0 && p.fsdp_group > 0 && p.fsdp_group < p.data_parallel) {
    s += fmt::format(" (sharded in groups of {}, {} replicas)", p.fsdp_group,
                     p.data_parallel / p.fsdp_group);
  }
  if (p.tp_comm_overlap) s += ", TP comm overlap";
  if (!p.overlap_grad_reduce) s += ", no grad-reduce overlap";
  if (p.overlap_param_gather) s += ", param-gather overlap";
  if (!p.dropout) s += ", no dropout";
  if (p.fused_cross_entropy) s += ", fused cross-entropy";
  if (!p.rope_fusion) s += ", unfused RoPE";
  s += p.flash_attention ? ", flash attention" : ", no flash attention";
  s += fmt::format(", {}", simulator::to_string(p.precision));
  if (p.precision == simulator::Precision::kFp8) {
    s += fmt::format(" ({} scaling)", simulator::to_string(p.fp8_recipe));
  }
  if (p.has_bf16_layers()) {
    s += fmt::format(", bf16 layers {} first + {} last", p.bf16_layers_at_start,
                     p.bf16_layers_at_end);
  }
  return s;
}

std::string step_report_text(const SimulationView& v) {
  const StepReport& r = v.report;
  std::string out = header_lines(v, "");
  out += "\n";
  out += fmt::format("iteration time   {}\n", seconds_human(r.iteration_time_s));
  out += fmt::format("throughput       {:.0f} tokens/s\n", r.tokens_per_s);
  out += fmt::format("MFU              {} (model FLOPs; HFU {} counts recomputation)\n",
                     percent(r.mfu), percent(r.hfu));
  // Labelled (issue 25): the peak the MFU is of, the precision's own peak
  // for FP8, and model TFLOP/s per GPU as NVIDIA's and Meta's tables give it.
  const simulator::Precision prec = v.plan.precision;
  const std::string peak_name = prec == simulator::Precision::kFp16 ? "FP16" : "BF16";
  out += fmt::format("                 of the {} peak{}; {:.0f} model TFLOP/s per GPU\n", peak_name,
                     simulator::low_precision(prec) &&
                             simulator::peak_flops(v.cluster.gpu, prec) > 0
                         ? fmt::format(" ({} of the {} peak)",
                                       percent(simulator::mfu_of_precision_peak(
                                           r.mfu, v.cluster.gpu, prec)),
                                       prec == simulator::Precision::kNvfp4 ? "FP4" : "FP8")
                         : std::string(),
                     simulator::model_flops_per_gpu(r.mfu, v.cluster.gpu, prec) / 1e12);
  out += fmt::format("peak memory      {}\n", memory_line(r));
  const std::string caveats = caveat_lines(v, "  - ");
  if (!caveats.empty()) out += "\ncaveats:\n" + caveats;
  out += fmt::format("\nbreakdown of the critical stage ({}):\n", r.critical_stage);
  out += breakdown_table(r, v.plan.precision).text();
  if (r.breakdown.expert_compute_s > 0) {
    out += fmt::format("of which MoE kernels (router, permutation, expert GEMMs): {:.4f} s\n",
                       r.breakdown.expert_compute_s);
  }
  if (!hidden(r.breakdown).empty()) {
    out += "\ncommunication hidden under compute (not in the parts above):\n";
    out += hidden_table(r).text();
  }
  out += "\nper stage:\n";
  out += stage_table(trimmed(r)).text();
  if (!v.notes.empty()) {
    out += "\nnotes:\n";
    for (const std::string& n : v.notes) out += "  - " + n + "\n";
  }
  return out;
}

std::string step_report_markdown(const SimulationView& v) {
  const StepReport& r = v.report;
  std::string out = "# Simulated training iteration\n\n";
  out += header_lines(v, "- ");
  out += "\n| iteration time | tokens/s | MFU | HFU | peak memory |\n|---:|---:|---:|---:|---|\n";
  out += fmt::format("| {} | {:.0f} | {} | {} | {} |\n\n", seconds_human(r.iteration_time_s),
                     r.tokens_per_s, percent(r.mfu), percent(r.hfu), memory_line(r));
  const std::string caveats = caveat_lines(v, "- ");
  if (!caveats.empty()) out += "## Caveats\n\n" + caveats + "\n";
  out += fmt::format("## Where the time goes (critical stage {})\n\n", r.critical_stage);
  out += breakdown_table(r, v.plan.precision).markdown();
  if (!hidden(r.breakdown).empty()) {
    out += "\nCommunication hidden under compute (not in the parts above):\n\n";
    out += hidden_table(r).markdown();
  }
  out += "\n## Per stage\n\n";
  out += stage_table(trimmed(r)).markdown();
  if (!v.notes.empty()) {
    out += "\n## Notes\n\n";
    for (const std::string& n : v.notes) out += "- " + n + "\n";
  }
  return out;
}

}  // namespace llmplan::reports

#include "reports/step_report_json.h"

#include "reports/step_report.h"
#include "simulator/caveats.h"
#include "simulator/cluster_json.h"
#include "simulator/collectives.h"
#include "simulator/lowering.h"
#include "simulator/model_json.h"
#include "simulator/plan_json.h"

namespace llmplan::reports {

boost::json::object breakdown_to_json(const simulator::StageBreakdown& b) {
  boost::json::object o{{"compute_s", b.compute_s},
                        {"recompute_s", b.recompute_s},
                        {"tp_comm_s", b.tp_comm_s},
                        {"host_overhead_s", b.host_overhead_s},
                        {"pp_exposed_s", b.pp_exposed_s},
                        {"bubble_s", b.bubble_s},
                        {"dp_exposed_s", b.dp_exposed_s},
                        {"optimizer_s", b.optimizer_s},
                        {"fp8_cast_s", b.fp8_cast_s},
                        {"fsdp_gather_exposed_s", b.fsdp_gather_exposed_s},
                        {"fsdp_reduce_scatter_exposed_s", b.fsdp_reduce_scatter_exposed_s},
                        {"cp_comm_s", b.cp_comm_s},
                        {"moe_a2a_s", b.moe_a2a_s}};
  // Only with activation CPU offloading (other reports' JSON is as before).
  if (b.cpu_offload_s > 0) o["cpu_offload_s"] = b.cpu_offload_s;
  for (const auto& [key, value] :
       {std::pair<const char*, double>{"overlap_slowdown_s", b.overlap_slowdown_s},
        {"end_s", b.end_s},
        {"tp_comm_hidden_s", b.tp_comm_hidden_s},
        {"dp_comm_hidden_s", b.dp_comm_hidden_s},
        {"fsdp_hidden_s", b.fsdp_hidden_s},
        {"cp_comm_hidden_s", b.cp_comm_hidden_s},
        {"moe_a2a_hidden_s", b.moe_a2a_hidden_s},
        {"expert_compute_s", b.expert_compute_s}}) {
    o[key] = value;
  }
  return o;
}

boost::json::object step_report_to_json(const SimulationView& v) {
  const simulator::StepReport& r = v.report;
  boost::json::object o;
  o["iteration_time_s"] = r.iteration_time_s;
  o["tokens_per_s"] = r.tokens_per_s;
  o["mfu"] = r.mfu;
  // Issue 25: `mfu` is of the 16-bit peak (FP8 plans included); also of the
  // plan's own precision's peak, and as model TFLOP/s per GPU.
  o["mfu_precision_peak"] = simulator::mfu_of_precision_peak(r.mfu, v.cluster.gpu, v.plan.precision);
  o["model_tflops_per_gpu"] = simulator::model_flops_per_gpu(r.mfu, v.cluster.gpu, v.plan.precision) / 1e12;
  o["hfu"] = r.hfu;
  o["model_flops"] = r.model_flops;
  o["hardware_flops"] = r.hardware_flops;
  o["peak_memory_bytes"] = r.peak_memory_bytes;
  o["memory_capacity_bytes"] = r.memory_capacity_bytes;
  o["fits_in_memory"] = r.fits_in_memory;
  o["memory_overflow_bytes"] = r.memory_overflow_bytes;
  o["num_gpus"] = r.num_gpus;
  o["critical_stage"] = r.critical_stage;
  o["cost_model"] = r.cost_model;
  boost::json::array caveats;
  for (const simulator::Caveat& c : simulator::caveat_list(r.caveats, v.cluster.gpu, r.mfu,
                                                                     v.plan.precision)) {
    caveats.push_back(boost::json::object{{"code", c.code}, {"text", c.text}});
  }
  o["caveats"] = std::move(caveats);
  o["breakdown"] = breakdown_to_json(r.breakdown);
  // Where the communicators run (issue 26): with expert parallelism or an
  // NVLink domain larger than a node.
  if (shows_placement(v.plan, v.cluster)) {
    const simulator::Placement pl = simulator::place(v.plan, v.cluster);
    boost::json::array groups;
    for (const simulator::GroupLink& g : simulator::group_links(v.plan, pl)) {
      groups.push_back(boost::json::object{{"group", g.name},
                                           {"size", g.size},
                                           {"ranks_per_domain", g.ranks_per_domain},
                                           {"domains", g.domains},
                                           {"link", g.domains <= 1 ? "nvlink" : "nvlink+nic"}});
    }
    o["placement"] = boost::json::object{
        {"nvlink_domain_gpus", v.cluster.nvlink_domain()},
        {"groups", std::move(groups)},
        {"pipeline_boundaries_crossing_domains", simulator::pipeline_domain_crossings(pl)}};
  }
  boost::json::array stages;
  for (const simulator::StageReport& s : r.stages) {
    boost::json::object so;
    so["stage"] = s.stage;
    so["layers"] = s.layers;
    so["time"] = breakdown_to_json(s.time);
    boost::json::object mem;
    mem["total_bytes"] = s.memory.total_bytes();
    mem["parameters"] = s.memory.parameters;
    mem["weights_and_optimizer_bytes"] = s.memory.weights_and_optimizer_bytes;
    mem["activation_bytes"] = s.memory.activation_bytes;
    mem["recompute_bytes"] = s.memory.recompute_bytes;
    mem["logits_bytes"] = s.memory.logits_bytes;
    mem["sharded_working_bytes"] = s.memory.sharded_working_bytes;
    mem["context_parallel_bytes"] = s.memory.context_parallel_bytes;
    mem["moe_buffer_bytes"] = s.memory.moe_buffer_bytes;
    mem["expert_parameters"] = s.memory.expert_parameters;
    mem["fragmentation_bytes"] = s.memory.fragmentation_bytes;
    mem["reserved_bytes"] = s.memory.reserved_bytes;
    mem["in_flight_micro_batches"] = s.memory.in_flight_micro_batches;
    so["memory"] = std::move(mem);
    stages.push_back(std::move(so));
  }
  o["stages"] = std::move(stages);
  o["model"] = simulator::model_to_json(v.model);
  o["parameters"] = static_cast<double>(v.model.parameter_count());
  o["total_params"] = r.total_params;
  o["active_params"] = r.active_params;
  o["plan"] = simulator::plan_to_json(v.plan);
  o["cluster"] = simulator::cluster_to_json(v.cluster);
  boost::json::array notes;
  for (const std::string& n : v.notes) notes.emplace_back(n);
  o["notes"] = std::move(notes);
  return o;
}

}  // namespace llmplan::reports

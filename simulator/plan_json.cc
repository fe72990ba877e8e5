#include "simulator/plan_json.h"

#include <string>
#include <string_view>
#include <vector>

#include "base/strict_json.h"
#include "simulator/precision.h"

namespace llmplan::simulator {

namespace {

// Reads the number format `key` through its parser (simulator/precision.h);
// an unknown name fails as JsonObjectReader::read_enum words it.
template <typename E>
void read_format(json::JsonObjectReader* r, std::string_view key, E* out,
                 bool (*parse)(std::string_view, E*), const std::vector<std::string>& names) {
  std::string s;
  const bool had = r->has(key);
  r->read_string(key, &s);
  if (!had || !r->status().ok()) return;
  if (parse(s, out)) return;
  std::string allowed;
  for (const std::string& name : names) {
    allowed += allowed.empty() ? "" : ", ";
    allowed += name;
  }
  r->fail(key, "unknown value \"" + s + "\" (expected one of: " + allowed + ")");
}

}  // namespace

Status apply_plan_json(const boost::json::value& v, const std::string& path, Plan* out) {
  Plan p = *out;
  json::JsonObjectReader r(v, path);
  r.read_int("tp", &p.tensor_parallel, false, 1);
  r.read_int("pp", &p.pipeline_parallel, false, 1);
  r.read_int("dp", &p.data_parallel, false, 1);
  r.read_int("cp", &p.context_parallel, false, 1);
  r.read_enum("cp_comm", &p.cp_comm, {{"p2p", CpComm::kP2p}, {"all_gather", CpComm::kAllGather}});
  r.read_int("micro_batch", &p.micro_batch_size, false, 1);
  r.read_int("global_batch", &p.global_batch_size, false, 1);
  r.read_int("virtual_stages", &p.virtual_stages, false, 1);
  r.read_bool("account_for_embedding_in_pipeline_split",
              &p.account_for_embedding_in_pipeline_split);
  r.read_bool("account_for_loss_in_pipeline_split", &p.account_for_loss_in_pipeline_split);
  r.read_int("pipeline_first_chunk_layers", &p.pipeline_first_chunk_layers, false, -1);
  r.read_int("pipeline_last_chunk_layers", &p.pipeline_last_chunk_layers, false, -1);
  r.read_enum("schedule", &p.schedule,
              {{"gpipe", Schedule::kGpipe},
               {"1f1b", Schedule::kOneFOneB},
               {"interleaved", Schedule::kInterleaved},
               {"zb-h1", Schedule::kZbH1}});
  r.read_enum("recompute", &p.recompute,
              {{"none", Recompute::kNone},
               {"selective", Recompute::kSelective},
               {"full", Recompute::kFull}});
  // Megatron-Core's recompute_modules as a list of names; "core_attn" is
  // the selective recompute of the attention core.
  if (const boost::json::value* modules = r.child("recompute_modules")) {
    p.recompute_modules = 0;
    if (!modules->is_array()) {
      r.fail("recompute_modules", "must be a list of module names");
    } else {
      for (const boost::json::value& m : modules->as_array()) {
        const std::string name = m.is_string() ? std::string(m.as_string()) : std::string();
        if (name == "core_attn") {
          if (p.recompute == Recompute::kNone) p.recompute = Recompute::kSelective;
        } else if (name == "layernorm") {
          p.recompute_modules |= kRecomputeLayernorm;
        } else if (name == "moe_act") {
          p.recompute_modules |= kRecomputeMoeAct;
        } else if (name == "mla_up_proj") {
          p.recompute_modules |= kRecomputeMlaUpProj;
        } else {
          const std::string what = m.is_string() ? "\"" + name + "\"" : "(not a string)";
          r.fail("recompute_modules",
                 "unknown module " + what + "; known: core_attn, layernorm, moe_act, mla_up_proj");
          break;
        }
      }
    }
  }
  r.read_int("cpu_offloading_num_layers", &p.cpu_offload_layers, false, 0);
  r.read_bool("cpu_offload_v1", &p.cpu_offload_v1);
  r.read_bool("sequence_parallel", &p.sequence_parallel);
  r.read_bool("distributed_optimizer", &p.distributed_optimizer);
  r.read_bool("flash_attention", &p.flash_attention);
  read_format(&r, "precision", &p.precision, parse_precision, precision_names());
  read_format(&r, "fp8_recipe", &p.fp8_recipe, parse_fp8_recipe, fp8_recipe_names());
  r.read_int("bf16_layers_at_start", &p.bf16_layers_at_start, false, 0);
  r.read_int("bf16_layers_at_end", &p.bf16_layers_at_end, false, 0);
  r.read_int64("grad_bucket_bytes", &p.grad_bucket_bytes, false, 0);
  r.read_bool("overlap_grad_reduce", &p.overlap_grad_reduce);
  r.read_bool("grad_reduce_in_fp32", &p.grad_reduce_in_fp32);
  r.read_bool("fp8_param_gather", &p.fp8_param_gather);
  r.read_bool("pipeline_scatter_gather", &p.pipeline_scatter_gather);
  r.read_int("zero_stage", &p.zero_stage, false, 0);
  r.read_int("fsdp_group", &p.fsdp_group, false, 0);
  r.read_bool("tp_comm_overlap", &p.tp_comm_overlap);
  r.read_bool("overlap_param_gather", &p.overlap_param_gather);
  r.read_bool("dropout", &p.dropout);
  r.read_bool("fused_cross_entropy", &p.fused_cross_entropy);
  r.read_bool("rope_fusion", &p.rope_fusion);
  r.read_int("ep", &p.expert_parallel, false, 1);
  r.read_int("etp", &p.expert_tensor_parallel, false, 1);
  r.read_bool("moe_a2a_overlap", &p.moe_a2a_overlap);
  r.read_double("moe_imbalance", &p.moe_imbalance, false, 1.0);
  r.read_bool("moe_flex_dispatcher", &p.moe_flex_dispatcher);
  r.ignore("source");
  r.ignore("note");
  r.ignore("description");
  LLMPLAN_RETURN_IF_ERROR(r.finish());
  *out = p;
  return Status();
}

boost::json::value plan_to_json(const Plan& p) {
  boost::json::object o;
  o["tp"] = p.tensor_parallel;
  o["pp"] = p.pipeline_parallel;
  o["dp"] = p.data_parallel;
  o["cp"] = p.context_parallel;
  o["cp_comm"] = to_string(p.cp_comm);
  o["micro_batch"] = p.micro_batch_size;
  o["global_batch"] = p.global_batch_size;
  o["virtual_stages"] = p.virtual_stages;
  // Only when set (other plans' JSON is as before).
  if (p.account_for_embedding_in_pipeline_split) {
    o["account_for_embedding_in_pipeline_split"] = true;
  }
  if (p.account_for_loss_in_pipeline_split) o["account_for_loss_in_pipeline_split"] = true;
  if (p.pipeline_first_chunk_layers >= 0 || p.pipeline_last_chunk_layers >= 0) {
    o["pipeline_first_chunk_layers"] = p.pipeline_first_chunk_layers;
    o["pipeline_last_chunk_layers"] = p.pipeline_last_chunk_layers;
  }
  o["schedule"] = to_string(p.schedule);
  o["recompute"] = to_string(p.recompute);
  // Only when set (other plans' JSON is as before).
  if (p.recompute_modules != 0) {
    boost::json::array modules;
    if (p.recomputes(kRecomputeLayernorm)) modules.emplace_back("layernorm");
    if (p.recomputes(kRecomputeMoeAct)) modules.emplace_back("moe_act");
    if (p.recomputes(kRecomputeMlaUpProj)) modules.emplace_back("mla_up_proj");
    o["recompute_modules"] = std::move(modules);
  }
  if (p.cpu_offload_layers > 0) o["cpu_offloading_num_layers"] = p.cpu_offload_layers;
  if (!p.cpu_offload_v1) o["cpu_offload_v1"] = false;
  o["sequence_parallel"] = p.sequence_parallel;
  o["distributed_optimizer"] = p.distributed_optimizer;
  o["flash_attention"] = p.flash_attention;
  o["precision"] = to_string(p.precision);
  if (p.precision == Precision::kFp8) o["fp8_recipe"] = to_string(p.fp8_recipe);
  // Only when set (other plans' JSON is as before).
  if (p.bf16_layers_at_start > 0 || p.bf16_layers_at_end > 0) {
    o["bf16_layers_at_start"] = p.bf16_layers_at_start;
    o["bf16_layers_at_end"] = p.bf16_layers_at_end;
  }
  o["grad_bucket_bytes"] = p.grad_bucket_bytes;
  o["overlap_grad_reduce"] = p.overlap_grad_reduce;
  // Only when off (other plans' JSON is as before).
  if (!p.grad_reduce_in_fp32) o["grad_reduce_in_fp32"] = false;
  if (!p.fp8_param_gather) o["fp8_param_gather"] = false;
  o["pipeline_scatter_gather"] = p.pipeline_scatter_gather;
  o["zero_stage"] = p.zero_stage;
  o["fsdp_group"] = p.fsdp_group;
  o["tp_comm_overlap"] = p.tp_comm_overlap;
  o["overlap_param_gather"] = p.overlap_param_gather;
  o["dropout"] = p.dropout;
  o["fused_cross_entropy"] = p.fused_cross_entropy;
  // The expert layout only when it is not the default (dense plans' JSON is
  // as before).
  if (p.expert_parallel > 1 || p.expert_tensor_parallel > 1 || p.moe_a2a_overlap ||
      p.moe_imbalance != 1.0) {
    o["ep"] = p.expert_parallel;
    o["etp"] = p.expert_tensor_parallel;
    o["moe_a2a_overlap"] = p.moe_a2a_overlap;
    o["moe_imbalance"] = p.moe_imbalance;
  }
  // The flex dispatcher only when on (older plans' JSON is as before).
  if (p.moe_flex_dispatcher) o["moe_flex_dispatcher"] = true;
  if (!p.rope_fusion) o["rope_fusion"] = false;
  return o;
}

}  // namespace llmplan::simulator

// JSON form of a Plan (see plan.h), for configs, job lists and reports.
//
// Fields (all optional when applying):
//   tp, pp, dp, micro_batch, global_batch, virtual_stages (integers >= 1),
//   schedule ("gpipe" | "1f1b" | "interleaved" | "zb-h1"),
//   recompute ("none" | "selective" | "full"), precision ("bf16" | "fp16" | "fp8"),
//   fp8_recipe ("delayed" | "current" | "mxfp8"; written only with fp8),
//   grad_bucket_bytes (integer >= 0; 0 = one bucket per stage),
//   sequence_parallel, distributed_optimizer, flash_attention,
//   overlap_grad_reduce, pipeline_scatter_gather, tp_comm_overlap,
//   overlap_param_gather, dropout, fused_cross_entropy (booleans), zero_stage (0..3), fsdp_group (integer
//   >= 0; 0 = the whole data-parallel group), ep, etp (integers >= 1; expert
//   and expert tensor parallelism), moe_a2a_overlap (boolean), moe_imbalance
//   (number in [1, 64]); plan_to_json writes these four only when one is not
//   its default; grad_reduce_in_fp32 (boolean, default true; written only
//   when false); account_for_embedding_in_pipeline_split,
//   account_for_loss_in_pipeline_split (booleans, default false; written
//   only when true); moe_flex_dispatcher (boolean,
//   default false; written only when true); rope_fusion (boolean, default
//   true; written only when false); pipeline_first_chunk_layers, pipeline_last_chunk_layers
//   (integers >= -1, default -1 = not set; written only when set).
// Numbers may be bare or {"value": X, "source": "..."}. The documentation keys
// "source", "note" and "description" are accepted and ignored; any other key
// is an error.
#ifndef LLMPLAN_SIMULATOR_PLAN_JSON_H_
#define LLMPLAN_SIMULATOR_PLAN_JSON_H_

#include <boost/json.hpp>
#include <string>

#include "simulator/plan.h"
#include "base/status.h"

namespace llmplan::simulator {

// Applies the fields present in the JSON object `v` onto *out, leaving the
// others unchanged. `path` names the object in messages ("jobs.json: plan").
//
// Returns InvalidArgument naming path.field for an unknown key, a wrong type,
// an unknown enum spelling or a value out of range. Checks single fields
// only; validate(Plan) and validate(Model, Plan) check the combination. On
// error *out is left unchanged. Thread-safe.
Status apply_plan_json(const boost::json::value& v, const std::string& path, Plan* out);

// Every field of `plan` as a JSON object that apply_plan_json reads back to
// an equal Plan.
boost::json::value plan_to_json(const Plan& plan);

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_PLAN_JSON_H_

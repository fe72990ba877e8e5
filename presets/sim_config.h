// What one simulation runs: a Model, a Plan and a Cluster, read from a
// config file that names presets and overrides their fields -- or from a
// vTrain config (the format of data/vtrain/config_example.json).
#ifndef LLMPLAN_PRESETS_SIM_CONFIG_H_
#define LLMPLAN_PRESETS_SIM_CONFIG_H_

#include <string>
#include <string_view>
#include <vector>

#include "presets/catalog.h"
#include "simulator/cluster.h"
#include "simulator/model.h"
#include "simulator/plan.h"
#include "base/status.h"

namespace llmplan::presets {

// The inputs of one simulation, already checked with simulator::validate()
// (model, plan, model x plan, cluster). `notes` say how the input was
// interpreted: presets used, defaults applied, fields ignored or mapped, so
// reports can show them. A plain value.
struct SimConfig {
  simulator::Model model;
  simulator::Plan plan;
  simulator::Cluster cluster;
  std::vector<std::string> notes;
};

// OK when the model, the plan, the plan on that model, and the cluster all
// pass simulator::validate(), and the plan needs no more GPUs than a cluster
// with a fixed node count has. InvalidArgument naming the field otherwise.
Status validate(const SimConfig& config);

// Reads llmplan's config format: one object with
//   "model":   {"preset": NAME, ...fields to override} or all model fields,
//   "plan":    plan fields (plans have no presets),
//   "cluster": {"preset": NAME, ...overrides} or all cluster fields,
// plus optional "note"/"description" strings. Field names are those of
// simulator/{model,plan,cluster}_json.h; a cluster's "gpu" and "price" may
// name presets.
//
// Errors name the file and JSON path ("run.json: model.layers: ..."):
// ParseError for malformed JSON (with line:column), NotFound for a missing
// file or an unknown preset (listing the known names), InvalidArgument for
// unknown keys, wrong types, bad values, an inconsistent model/plan/cluster,
// or a plan needing more GPUs than a cluster with a fixed node count has.
// The file is read with read_input_file (base/input_file.h: at most
// 16 MiB, else InvalidArgument naming the path); *_text reads text already
// in memory, `source_name` naming it. Thread-safe (reads `catalog` only).
Result<SimConfig> load_sim_config_file(const std::string& path, const Catalog& catalog);
Result<SimConfig> load_sim_config_text(std::string_view text, const std::string& source_name,
                                       const Catalog& catalog);

// `config` in llmplan's config format, every field explicit (no presets),
// so that load_sim_config_text reads back an equal model, plan and cluster.
std::string sim_config_to_json(const SimConfig& config);

// How strictly load_vtrain_config_* follows vTrain's own checks.
struct VtrainLoadOptions {
  // vTrain asserts num_gpus == t * d * p, and so does llmplan by default.
  // The case_study_1 sweep files all say num_gpus 3360 whatever their plan;
  // with this set, a disagreeing num_gpus is ignored (t * d * p wins) and
  // the notes say so, instead of the file being rejected.
  bool ignore_stale_num_gpus = false;
};

// Reads a vTrain config (github.com/VIA-Research/vTrain, src/config.py):
// num_gpus, gpu_name, tensor/data/pipeline_parallel_size, global/micro
// _batch_size, model_arch, num_layers, hidden_size, num_attention_heads,
// max_length, vocab_size, use_gradient_bucket, ddp_bucket_size,
// use_checkpoint, pipeline_scheduling, inter_node_bandwidth,
// intra_node_bandwidth, node_size, trace_path. Absent (or null) fields take
// vTrain's defaults, listed in the notes. Every field is honoured or
// rejected with the reason; the mapping (GPU preset, bandwidth units, what
// vTrain's model implies for the plan) is recorded in `notes`:
//   - gpu_name "A100" -> cluster preset dgx-a100-80gb (the only GPU mapped);
//   - the model is vTrain's GPT: learned positions, GeLU 4h, tied, biases;
//   - plan: 1F1B, fp16, no flash attention / sequence parallelism /
//     distributed optimizer / pipeline scatter-gather; use_checkpoint ->
//     full recompute; use_gradient_bucket -> ddp_bucket_size MiB (default
//     PyTorch DDP's 25 MiB) buckets overlapped with backward, else one
//     unoverlapped all-reduce per stage;
//   - inter_node_bandwidth (Gb/s per node) -> nic_bytes_per_s =
//     value * 1e9 / 8 / node_size; intra_node_bandwidth (GB/s, vTrain's
//     achieved all-reduce bus bandwidth per GPU) -> nvlink_bytes_per_s =
//     2 * value * 1e9 with nvlink_efficiency 1; node_size -> gpus_per_node;
//     trace_path is ignored.
//
// Errors, naming the file and field: as load_sim_config_file, plus
// InvalidArgument where vTrain itself would refuse the config (num_gpus not
// t*d*p unless options say otherwise, layers not divisible by pp, heads not
// divisible by tp, ...) or where llmplan cannot honour it (an unknown
// gpu_name or model_arch, a pipeline schedule other than 1f1b).
// Thread-safe.
Result<SimConfig> load_vtrain_config_file(const std::string& path, const Catalog& catalog,
                                          const VtrainLoadOptions& options = {});
Result<SimConfig> load_vtrain_config_text(std::string_view text, const std::string& source_name,
                                          const Catalog& catalog,
                                          const VtrainLoadOptions& options = {});

}  // namespace llmplan::presets

#endif  // LLMPLAN_PRESETS_SIM_CONFIG_H_

// Reading a RUNS FILE for `llmplan validate` and `llmplan calibrate`: one
// measured training run per row, each with its own model, plan and cluster
// (unlike vTrain's measured CSV, whose rows share one mapping).
//
// Two forms:
//  - CSV in the layout of data/h100/published_runs.csv (recognised by its
//    header: "name", "model", "measured_step_s", "fsdp", ... see
//    data/h100/README.md), joined by its "model" column with a models table
//    in the layout of data/h100/models.csv (by default models.csv in the
//    same folder). Each row is mapped onto a Model + Plan + Cluster as
//    map_published_run() says.
//  - JSON: an array of {"name": S, "source": S (optional), "model": model
//    JSON (simulator/model_json.h) or {"preset": NAME, ...overrides},
//    "plan": plan JSON (simulator/plan_json.h), "cluster": NAME or cluster
//    JSON (simulator/cluster_json.h), "measured_step_s": seconds}, read as
//    presets::load_sim_config_text reads a config.
//
// Rows the simulator cannot express (FP8, context parallelism, mixture of
// experts, an activation it lacks, heads * head_dim != hidden, ...) are kept
// with the list of features they miss, so that reports count and list them
// rather than dropping them silently.
//
// Every error is one line naming the file and line (CSV: "FILE:LINE:
// column "NAME": ...") or the JSON path ("FILE: [3].plan.tp: ...").
#ifndef LLMPLAN_PLANNER_ACCURACY_RUNS_FILE_H_
#define LLMPLAN_PLANNER_ACCURACY_RUNS_FILE_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "presets/catalog.h"
#include "presets/sim_config.h"
#include "simulator/status.h"

namespace llmplan::planner {

// The most rows a runs file (and a models table) may hold.
inline constexpr size_t kMaxRunsFileRows = 20000;

// One row of a models table (data/h100/models.csv).
struct ModelRow {
  int line = 0;
  std::string name;
  int layers = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0, vocab = 0;
  std::string activation;  // gelu, swiglu, squared-relu, ...
  bool tied_embeddings = false;
  std::string positions;   // learned, rotary, alibi, none
  bool linear_bias = false;
  int moe_experts = 0;
};

// One row of a published-runs CSV, as written (only the columns the mapping
// reads).
struct RunRow {
  int line = 0;
  std::string name, source, model, precision, fsdp, recompute, overlaps, gpus_per_node;
  int gpus = 0, seq = 0, tp = 0, pp = 0, vp = 0, cp = 0, dp = 0, ep = 0;
  int micro_batch = 0, global_batch = 0;
  double measured_step_s = 0;
};

// One measured run of a runs file, mapped.
struct PublishedRun {
  int line = 0;                      // CSV line, or 1-based array index in JSON
  std::string file;                  // the runs file
  std::string name;
  std::string source;                // short source id (e.g. "llm-foundry", "Megatron-LM")
  double measured_step_s = 0;
  // Features the simulator lacks for this row ("precision fp4",
  // "moe", "activation squared-relu", "head_dim != hidden/heads", ...);
  // empty when the row is expressible, and only then is `config` set.
  std::vector<std::string> missing;
  presets::SimConfig config;
};

// The short id of a source cell: the repository name of a GitHub URL
// ("https://github.com/mosaicml/llm-foundry/blob/..." -> "llm-foundry"),
// else the cell up to its first space.
std::string source_id(std::string_view source_cell);

// True when the first line of `text` is a published-runs CSV header (it has
// the columns "name", "model", "measured_step_s" and "fsdp").
bool is_runs_csv(std::string_view text);

// Parses a models table. Errors (one line, "FILE:LINE: column "NAME": ..."):
// a missing column, a bad number, a duplicated model name, no rows.
Result<std::vector<ModelRow>> read_models_csv_text(std::string_view text,
                                                   const std::string& source_name);

// Parses a published-runs CSV (the columns map_published_run() reads; other
// columns are ignored). Errors: a missing column, a non-numeric or
// non-positive count or time, tp * pp * cp * dp != gpus, no rows.
Result<std::vector<RunRow>> read_runs_rows_text(std::string_view text,
                                                const std::string& source_name);

// Maps a row onto the simulator's inputs (the cluster preset "dgx-h100"
// unless `cluster` names another; 8 GPUs per node as DGX-H100):
//  - precision bf16 (fp16 likewise); fp8 -> precision fp8, recipe current
//    for "fp8-current" (Megatron-Bridge), else delayed (Transformer
//    Engine's default; NeMo 24.07 and llm-foundry do not state theirs);
//    another precision -> missing "precision X";
//  - ep > 1 or MoE experts in the
//    model -> missing "moe"; an activation other than gelu/swiglu -> missing
//    "activation X"; heads * head_dim != hidden -> missing
//    "head_dim != hidden/heads"; positions other than learned / rotary /
//    alibi / none -> missing "positions X";
//  - tp, pp, cp, dp, micro and global batch as written (the file's dp
//    excludes cp; cp > 1 runs ring attention, cp_comm p2p, Megatron-Core's
//    default); vp > 1 -> interleaved
//    schedule with vp virtual stages, else 1F1B;
//  - recompute "full..." / "selective..." / "none..."; "unstated" -> none;
//  - NeMo rows with sharding and overlaps unstated: the NeMo-Framework-
//    Launcher 24.07 configs they ran (distributed optimizer with gradient-
//    reduce and parameter-gather overlap where dp > 1, TP communication
//    overlap where tp > 1); NeMo and Megatron-Bridge SwiGLU (Llama-style)
//    models without dropout;
//  - sequence parallelism whenever tp > 1 (every tp > 1 row is a Megatron
//    run: Megatron-Core recipes turn it on with TP, and --tp-comm-overlap
//    requires it);
//  - fsdp "zeroN" -> zero_stage N (zero1 also sets distributed_optimizer);
//    "sharding group S" with S < dp -> fsdp_group S; "unstated" -> 0;
//  - overlaps: "TP-comm overlap on" / "--tp-comm-overlap" ->
//    tp_comm_overlap; "overlap_grad_reduce" / "--overlap-grad-reduce" /
//    "grad-reduce" -> overlap_grad_reduce with Megatron-Core's default
//    bucket of 40M parameters (160 MB of fp32 gradients);
//    "overlap_param_gather" / "param-gather" -> overlap_param_gather. PyTorch
//    FSDP rows (zero2/zero3 with "PyTorch FSDP") overlap both: FSDP issues
//    its all-gathers and reduce-scatters on a separate stream and the host
//    runs ahead, so parameter gathers overlap compute; Megatron-FSDP rows
//    (zero2/zero3 with "Megatron-FSDP") likewise, its defaults. Otherwise
//    no overlap;
//  - flash attention on; learned positions stay learned; ALiBi and "none"
//    become rotary (no position parameters; their compute is negligible).
// NotFound naming the row when its model is not in `models`; InvalidArgument
// naming the row when an expressible row gives an invalid model or plan.
Result<PublishedRun> map_published_run(const RunRow& row, const std::vector<ModelRow>& models,
                                       const std::string& file, const presets::Catalog& catalog,
                                       const std::string& cluster = "dgx-h100");

// Reads a published-runs CSV and its models table (models_path empty:
// models.csv beside `path`) and maps every row.
Result<std::vector<PublishedRun>> read_runs_csv_file(const std::string& path,
                                                     const std::string& models_path,
                                                     const presets::Catalog& catalog);
Result<std::vector<PublishedRun>> read_runs_csv_text(std::string_view runs_text,
                                                     const std::string& runs_name,
                                                     std::string_view models_text,
                                                     const std::string& models_name,
                                                     const presets::Catalog& catalog);

// Reads the JSON form. Errors name the file and the element's path.
Result<std::vector<PublishedRun>> read_runs_json_text(std::string_view text,
                                                      const std::string& source_name,
                                                      const presets::Catalog& catalog);

// A runs file of either form: JSON when the text starts with '[' (after
// blanks), else the CSV (which must have the published-runs header).
Result<std::vector<PublishedRun>> read_runs_file(const std::string& path,
                                                 const std::string& models_path,
                                                 const presets::Catalog& catalog);

// True when `path` holds a runs file (JSON array, or the published-runs CSV
// header), false for anything else (e.g. vTrain's measured CSV). IoError /
// NotFound naming the path when it cannot be read.
Result<bool> is_runs_file(const std::string& path);

// Deterministic fold of each row for k-fold cross-validation: the distinct
// keys, in order of first appearance, go to folds 0, 1, ..., k-1, 0, ...;
// rows with equal keys share a fold (repeat measurements of one
// configuration never straddle training and held-out data). REQUIRES: k >= 1.
std::vector<int> assign_folds(const std::vector<std::string>& keys, int k);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_ACCURACY_RUNS_FILE_H_

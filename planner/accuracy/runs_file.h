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
// Rows the simulator cannot express (a precision or an activation it lacks,
// an MoE layer pattern it cannot read, ...) are kept with the list of
// features they miss, so that reports count and list them rather than
// dropping them silently.
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
#include "base/status.h"

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
  // The other MoE columns: optional in a table whose every model is dense
  // (moe_experts 0), required (an error naming the line otherwise) as soon
  // as one model has experts. moe_expert_ffn 0 = the dense ffn.
  int moe_top_k = 0, moe_expert_ffn = 0, moe_shared_experts = 0;
  std::string moe_layer_pattern;  // "every layer MoE (...)", "dense (no MoE)", ...
  // Sliding-window attention: the optional columns "sliding_window" and
  // "full_attention_every" when the table has them, else read from the
  // optional "shape_notes" column (data/h100/models.csv has no column for it):
  // the window from "sliding-window attention (window N)", the period of
  // full-attention layers from "window_attn_skip_freq K" (or 2 for
  // "alternating layers"), 0 = every layer windowed.
  int sliding_window = 0, full_attention_every = 0;
  // The clamped gated activation (simulator::Model::activation_clamp): the
  // integer after "clamp" in the shape notes of a swiglu model ("clamp
  // 7.0" gives 7; GPT-OSS), 0 = none.
  double activation_clamp = 0;
  // Features the simulator lacks, from shape notes that start "missing
  // features: A (...); B (...); ..." (data/blackwell/MODELS.md): the names
  // A, B (text before the parenthesis), up to the first sentence end; an
  // item that applies only to some runs ("... in the runs named ...") is
  // left to the runs file. Every run of the model lists them as missing.
  std::vector<std::string> missing_features;
  // The optional column "llmplan_preset": a model preset (presets/models.json)
  // that expresses the whole shape, features the columns cannot hold (latent
  // attention, state-space layers, ...) included. When set, a run of this
  // model simulates the preset with the run's sequence length; the columns
  // layers, hidden, heads, kv_heads, vocab, moe_experts and moe_top_k must
  // agree with it (an error naming the line otherwise), and the features
  // still listed as missing keep the row unexpressible. Empty: the model is
  // built from the columns.
  std::string preset;
};

// One row of a published-runs CSV, as written (only the columns the mapping
// reads).
struct RunRow {
  int line = 0;
  std::string name, source, model, precision, fsdp, recompute, overlaps, gpus_per_node;
  int gpus = 0, seq = 0, tp = 0, pp = 0, vp = 0, cp = 0, dp = 0, ep = 0;
  int micro_batch = 0, global_batch = 0;
  double measured_step_s = 0;
  // The Blackwell form (data/blackwell/published_runs.csv) only; empty / 0
  // for the H100 form.
  std::string release;   // the "container" cell: the software release
  std::string system;    // the "system" cell (DGX-B200, DGX-GB200, ...)
  std::string cluster;   // the cluster preset the system maps to
  double capacity_factor = 0;  // "(tokendrop)" rows: MoE capacity factor
  // "(w/ MTP)" rows: 1 multi-token prediction layer (Model::mtp_layers);
  // "(w/o MTP)": 0; -1 (neither): as the model preset has it.
  int mtp_layers = -1;
  // Reasons the row cannot be mapped ("reserved source", "inconsistent
  // layout ...", "token dropping", ...), listed as its missing features.
  std::vector<std::string> missing;
};

// One measured run of a runs file, mapped.
struct PublishedRun {
  int line = 0;                      // CSV line, or 1-based array index in JSON
  std::string file;                  // the runs file
  std::string name;
  std::string model;                 // the row's model (CSV) or the config's model name (JSON)
  std::string source;                // short source id (e.g. "llm-foundry", "Megatron-LM")
  double measured_step_s = 0;
  // The software release the run was measured on: the Blackwell form's
  // "container" cell (e.g. "NeMo 26.04.01 (Megatron-Bridge)"), or the H100
  // form's source section when it names a NeMo container
  // (source_section_release(); release_from_source set); empty otherwise
  // and for the JSON form.
  std::string release;
  // The release was read from the H100 form's source cell: it is reported
  // (validate, calibrate --moe-only) but does not select calibration rows
  // (AccuracyCase::release_from_source).
  bool release_from_source = false;
  // The row's system (Blackwell form; e.g. "DGX-B200") and the cluster
  // preset it maps to ("dgx-b200", "gb200-nvl72"); empty otherwise.
  std::string system, cluster;
  // Features the simulator lacks for this row ("precision fp4",
  // "activation squared-relu", "moe_layer_pattern X", ...);
  // empty when the row is expressible, and only then is `config` set.
  std::vector<std::string> missing;
  presets::SimConfig config;
};

// The short id of a source cell: the repository name of a GitHub URL
// ("https://github.com/mosaicml/llm-foundry/blob/..." -> "llm-foundry"),
// else the cell up to its first space.
std::string source_id(std::string_view source_cell);

// The release an H100-form source cell names: its section when that is a
// NeMo container ("... (section '26.04.01 NeMo Container')" ->
// "26.04.01 NeMo Container"); empty when the cell names none.
std::string source_section_release(std::string_view source_cell);

// True when the first line of `text` is a published-runs CSV header: the
// H100 form (the columns "name", "model", "measured_step_s" and "fsdp") or
// the Blackwell form (is_blackwell_runs_csv).
bool is_runs_csv(std::string_view text);

// True when the first line of `text` is the header of the Blackwell form,
// data/blackwell/published_runs.csv: the columns "source", "container",
// "system", "num_gpus", "model", "seq", "precision", "tp", "pp", "cp", "vp",
// "ep", "etp", "dp", "micro_batch", "global_batch" and
// "tokens_per_s_per_gpu" (others, e.g. "notes", are read when present).
bool is_blackwell_runs_csv(std::string_view text);

// The numeric components of a release ("NeMo 26.04.01 (Megatron-Bridge)" ->
// {26, 4, 1}; "NeMo 26.04" -> {26, 4, 0}; "NeMo 25.04.rc2" -> {25, 4, -1, 2}:
// a release candidate sorts before its release); {} when the cell names no NeMo release (e.g. "MCore
// dev + TE 2.9-based (2025)"). Compare with std::vector's operator<.
std::vector<int> release_version(std::string_view release);

// The models-table name of a Blackwell-form model cell: lower case, '_' and
// ' ' -> '-', "(...)" suffixes dropped, then the aliases of the sources
// ("LLAMA3-405B" / "LLAMA3.1_405B" -> "llama3.1-405b", "DeepSeekV3" ->
// "deepseek-v3", "Nemotron-15B" -> "nemotron4-15b", "LLAMA4-Scout-LLM" ->
// "llama4-scout", "GPT3-175B" -> "gpt3-175b", ...).
std::string blackwell_model_name(std::string_view cell);

// Parses the Blackwell form into rows for map_published_run (never an error
// for a row it cannot map consistently: such rows carry RunRow::missing):
//  - step time = global_batch * seq / (tokens_per_s_per_gpu * num_gpus);
//  - system DGX-B200 -> cluster "dgx-b200"; DGX-GB200, GB200 NVL72, GB200
//    -> "gb200-nvl72"; another system -> missing "system X";
//  - model: blackwell_model_name(); "(tokendrop)" -> capacity factor 1 with
//    token dropping (Megatron-Bridge's token-drop recipes:
//    moe_expert_capacity_factor 1.0, moe_pad_expert_input_to_capacity);
//    "(w/ MTP)" -> missing "multi-token prediction"; "(w/o MTP)" plain;
//  - precision BF16 -> bf16; FP8, FP8-CS ... -> fp8 current scaling; FP8-MX,
//    MXFP8 -> fp8 with the mxfp8 recipe; NVFP4 -> "nvfp4", read by the plan's
//    JSON precision parser (missing "precision nvfp4" while it has no such
//    precision); the 25.07 "FP8 variant in parentheses" rows (recipe not in
//    the stored excerpt) -> missing "precision FP8 variant unstated";
//  - vp "n/a" or blank -> 1; etp blank -> 1 (etp > 1 -> missing "expert
//    tensor parallelism > 1"); ep blank -> 1;
//  - known problems of the sources: tp * pp * cp * dp != num_gpus (the
//    25.04.rc2 long-sequence table) -> missing "inconsistent layout";
//    global_batch not a multiple of micro_batch * dp, or not micro_batch *
//    dp * GA where the notes state "GA=N" -> missing "inconsistent batch";
//    GBS and MBS printed swapped (notes "swapped",
//    GBS < MBS) -> swapped back, as the notes' GA and DP imply; a blank seq
//    or throughput -> missing "seq not stated" / "throughput not stated";
//  - a layout the simulator's checks refuse (e.g. vp > 1 with pp 1) ->
//    missing "invalid layout (the check's message)";
//  - NVIDIA dgxc-benchmarking rows -> missing "reserved source" (a blind
//    test of this project: never fitted nor counted in an accuracy figure);
//  - recompute, sharding and overlaps from the Megatron-Bridge performance
//    recipes (blackwell_rows.cc names the files and commits): the distributed
//    optimizer with gradient-reduce and parameter-gather overlap; TP
//    communication overlap where tp > 1; Megatron-FSDP (zero3) where the
//    notes say "FSDP=N" with N > 0 (Llama 3 70B / 3.1 405B on GB200 in FP8:
//    the recipes' activation CPU offloading of 40 / 92 layers, overlaps
//    "cpu_offloading_num_layers=N" -> Plan::cpu_offload_layers; other
//    precisions or systems: missing "activation CPU offloading");
//    GPT-OSS 120B: recompute_modules layernorm, moe_act (Plan::
//    recompute_modules) except the GB200 MXFP8 recipe at GBS 1280 (none);
//    Nemotron 3 Super on B200 at TP 1 (BF16, MXFP8): core_attn, layernorm,
//    moe_act; DeepSeek-V3 (moe_recipes.h): mla_up_proj;
//    MoE all-to-all overlap for GPT-OSS 120B on GB200 at GBS 1280; every
//    other recipe: no recompute, no MoE all-to-all overlap (WorkloadBaseConfig
//    defaults).
// Errors: a missing column, no rows.
Result<std::vector<RunRow>> read_blackwell_runs_rows_text(std::string_view text,
                                                          const std::string& source_name);

// Parses a models table. Errors (one line, "FILE:LINE: column "NAME": ..."):
// a missing column, a bad number, a duplicated model name, no rows, an MoE
// model (moe_experts > 0) in a table without the moe_top_k, moe_expert_ffn,
// moe_shared_experts or moe_layer_pattern column, moe_top_k outside [1,
// moe_experts] for an MoE model, MoE values other than 0 for a dense one.
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
//  - an activation other than gelu/swiglu -> missing "activation X";
//    positions other than learned / rotary / alibi / none -> missing
//    "positions X"; ep > 1 on a dense model -> missing "ep > 1 on a dense
//    model";
//  - heads * head_dim != hidden (Qwen3, GPT-OSS) -> Model::head_dim_size =
//    head_dim (the query width is heads x head_dim); otherwise head_dim_size
//    stays 0 (= hidden / heads, as before);
//  - MoE models (moe_experts > 0; data/h100 has gpt-oss-120b, qwen3-30b-a3b
//    and qwen3-235b-a22b): num_experts, moe_top_k, moe_ffn_hidden_size
//    (moe_expert_ffn; 0 = ffn), moe_shared_experts as the table gives them;
//    moe_layer_pattern "every layer ..." -> every layer MoE, "every K ..."
//    -> moe_layer_every K, "first N ... dense" -> moe_first_dense N (text in
//    parentheses is ignored), anything else -> missing "moe_layer_pattern
//    X"; router softmax (Megatron-Core's default, which Qwen3 and GPT-OSS
//    use); dropless (capacity factor 0) and balanced (Plan::moe_imbalance
//    1): the published MoE rows force the token distribution to balance
//    and drop no token. GPT-OSS's gated quick_gelu (x * sigmoid(1.702 x),
//    clamped) is listed as swiglu in models.csv and costs as SwiGLU (the
//    same GEMMs; the gate's elementwise cost differs negligibly); its
//    attention sinks, YaRN rotary and Qwen3's QK layernorm are not
//    modelled (elementwise, < 1 % of a layer);
//  - sliding-window attention: sliding_window / full_attention_every of the
//    ModelRow (GPT-OSS: window 128, full attention every 2nd layer: 0-based
//    layer i is full when i % 2 == 1, Megatron-Core's window_attn_skip_freq
//    2 on 1-based layer numbers);
//  - ep from the row, expert tensor parallelism etp = 1 (the recipes' presets
//    for every published MoE row), so the expert-data-parallel width is
//    tp * cp * dp / ep (what the rows' notes state); Plan::moe_a2a_overlap
//    when the overlaps column says "MoE all-to-all overlap on" (or
//    "moe_a2a_overlap=True", "--overlap-moe-expert-parallel-comm"); "off",
//    "not set" and "unstated" -> false;
//  - tp, pp, cp, dp, micro and global batch as written (the file's dp
//    excludes cp; cp > 1 runs ring attention, cp_comm p2p, Megatron-Core's
//    default); vp > 1 -> interleaved
//    schedule with vp virtual stages, else 1F1B;
//  - recompute "full..." -> full, "selective..." -> selective, "none..."
//    and "unstated" -> none. Megatron-Bridge's GPT-OSS recipe's "selective
//    (recompute_modules: layernorm, moe_act)" maps to Recompute::kSelective,
//    the closest: with flash attention the simulator's selective
//    recomputation adds no time (its recomputed attention core is what
//    flash attention recomputes anyway), and the recomputed norms and
//    expert activations are memory-bound elementwise kernels (under 1 % of
//    a layer's time) that it does not charge;
//  - NeMo rows with sharding and overlaps unstated: the NeMo-Framework-
//    Launcher 24.07 configs they ran (distributed optimizer with gradient-
//    reduce and parameter-gather overlap where dp > 1, TP communication
//    overlap where tp > 1); Megatron-Bridge rows with the distributed
//    optimizer (zero1) and overlaps unstated: gradient-reduce and
//    parameter-gather overlap, as every Megatron-Bridge recipe the file
//    read sets with the distributed optimizer (no TP or MoE all-to-all
//    overlap); NeMo and Megatron-Bridge SwiGLU (Llama-style, Qwen3, GPT-OSS)
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

// Reads a published-runs CSV (either form) and its models table
// (models_path empty: models.csv beside `path`) and maps every row. In the
// Blackwell form each row maps onto its own cluster (RunRow::cluster); a
// model the table lacks -> missing "model X not in the models table", a
// cluster the catalog lacks -> missing "cluster preset X" (both become
// expressible once added).
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

// The mapping of a runs-file row onto a Model + Plan + Cluster
// (runs_file.h, map_published_run): the row's precision, the model (a
// preset or the models table's columns), the plan's layout and recompute,
// and the sharding, overlaps and defaults of each source's recipes.
#include <boost/json.hpp>

#include <algorithm>
#include <utility>

#include "planner/accuracy/moe_recipes.h"
#include "planner/accuracy/runs_cells.h"
#include "planner/accuracy/runs_file.h"
#include "simulator/plan_json.h"

namespace llmplan::planner {

using namespace runs_cells;  // NOLINT(google-build-using-namespace): the cell readers

namespace {

// The model preset a models-table row names (ModelRow::preset), checked
// against the row's columns.
Result<simulator::Model> preset_model(const ModelRow& m, const presets::Catalog& catalog) {
  const std::string where =
      "models table line " + std::to_string(m.line) + ", model \"" + m.name + "\": llmplan_preset";
  Result<simulator::Model> found = catalog.model(m.preset);
  if (!found.ok()) return found.status().with_prefix(where);
  const simulator::Model& p = *found;
  const auto check = [&](const char* column, int64_t table, int64_t preset) -> Status {
    if (table == preset) return Status();
    return Status::invalid_argument(where + " \"" + m.preset + "\" has " + column + " " +
                                    std::to_string(preset) + ", the table says " +
                                    std::to_string(table));
  };
  LLMPLAN_RETURN_IF_ERROR(check("layers", m.layers, p.num_layers));
  LLMPLAN_RETURN_IF_ERROR(check("hidden", m.hidden, p.hidden_size));
  LLMPLAN_RETURN_IF_ERROR(check("heads", m.heads, p.num_heads));
  LLMPLAN_RETURN_IF_ERROR(check("kv_heads", m.kv_heads, p.kv_heads()));
  LLMPLAN_RETURN_IF_ERROR(check("vocab", m.vocab, p.vocab_size));
  LLMPLAN_RETURN_IF_ERROR(check("moe_experts", m.moe_experts, p.num_experts));
  LLMPLAN_RETURN_IF_ERROR(check("moe_top_k", m.moe_experts > 0 ? m.moe_top_k : 0, p.moe_top_k));
  return found;
}

// The row's identity: line, file, name, model, source, step, release,
// system and cluster.
PublishedRun run_header(const RunRow& row, const std::string& file, bool blackwell) {
  PublishedRun out;
  out.line = row.line;
  out.file = file;
  out.name = row.name;
  out.model = row.model;
  out.source = source_id(row.source);
  out.measured_step_s = row.measured_step_s;
  out.release = row.release;
  if (!blackwell) {
    out.release = source_section_release(row.source);
    out.release_from_source = !out.release.empty();
  }
  out.system = row.system;
  out.cluster = row.cluster;
  return out;
}

// The row's number format and FP8 recipe; what it cannot express goes to
// *missing.
void map_precision(const RunRow& row, bool blackwell, simulator::Precision* precision,
                   simulator::Fp8Recipe* recipe, std::vector<std::string>* missing) {
  // FP8 rows: "fp8-current" (Megatron-Bridge's current scaling); a row that
  // does not state its recipe ran Transformer Engine's default, delayed
  // scaling (NeMo 24.07, llm-foundry's amp_fp8).
  if (starts_with(row.precision, "fp8")) {
    *precision = simulator::Precision::kFp8;
    if (starts_with(row.precision, "fp8-current")) *recipe = simulator::Fp8Recipe::kCurrent;
    if (starts_with(row.precision, "fp8-mx")) *recipe = simulator::Fp8Recipe::kMxfp8;
  } else if (starts_with(row.precision, "nvfp4")) {
    *precision = simulator::Precision::kNvfp4;
  } else if (starts_with(row.precision, "fp16")) {
    *precision = simulator::Precision::kFp16;
  } else if (row.precision == "nvfp4") {
    // Through the plan's own precision parser: expressible as soon as the
    // simulator has the precision.
    simulator::Plan probe;
    boost::json::object o;
    o["precision"] = "nvfp4";
    if (simulator::apply_plan_json(o, "precision", &probe).ok()) {
      *precision = probe.precision;
    } else {
      missing->push_back("precision nvfp4");
    }
  } else if (!starts_with(row.precision, "bf16") && !(blackwell && row.precision.empty())) {
    // (A Blackwell-form row without a precision already lists why.)
    missing->push_back("precision " + row.precision.substr(0, row.precision.find(' ')));
  }
}

// The model of a models-table row that names a preset (ModelRow::preset),
// with the row's sequence, MTP and token dropping. True when the mapping
// ends here (a feature is missing).
Result<bool> map_preset_model(const RunRow& row, const ModelRow* m, bool moe,
                              const presets::Catalog& catalog, PublishedRun* run) {
  PublishedRun& out = *run;
  // The preset expresses the shape (ModelRow::preset).
  LLMPLAN_ASSIGN_OR_RETURN(simulator::Model preset, preset_model(*m, catalog));
  if (!out.missing.empty()) return true;
  out.config.model = std::move(preset);
  out.config.model.seq_length = row.seq;
  if (row.mtp_layers >= 0) {
    out.config.model.mtp_layers = row.mtp_layers;
    // "(w/o MTP)": no module, so no shared weights or block pattern either.
    if (row.mtp_layers == 0) {
      out.config.model.mtp_shared_weights = false;
      out.config.model.mtp_layer_pattern.clear();
    }
  }
  if (moe) {
    out.config.model.moe_capacity_factor = row.capacity_factor;
  } else if (row.capacity_factor > 0) {
    out.missing.push_back("token dropping on a dense model");
    return true;
  }
  return false;
}

// The model from the models table's columns. True when the mapping ends
// here (a feature is missing).
bool map_table_model(const RunRow& row, const ModelRow* m, bool moe, PublishedRun* run) {
  PublishedRun& out = *run;
  if (row.mtp_layers > 0) out.missing.push_back("multi-token prediction");
  int moe_every = 1, moe_first_dense = 0;
  if (moe && !parse_moe_layer_pattern(m->moe_layer_pattern, &moe_every, &moe_first_dense)) {
    out.missing.push_back("moe_layer_pattern " + m->moe_layer_pattern);
  }
  // squared-relu: relu(x)^2, non-gated (Nemotron-4, Nemotron-H).
  if (m->activation != "gelu" && m->activation != "swiglu" && m->activation != "squared-relu") {
    out.missing.push_back("activation " + m->activation);
  }
  const bool learned = m->positions == "learned";
  if (!learned && m->positions != "rotary" && m->positions != "alibi" && m->positions != "none") {
    out.missing.push_back("positions " + m->positions);
  }
  if (!out.missing.empty()) return true;

  simulator::Model& model = out.config.model;
  model.name = m->name;
  model.num_layers = m->layers;
  model.hidden_size = m->hidden;
  model.num_heads = m->heads;
  model.num_kv_heads = m->kv_heads;
  model.ffn_hidden_size = m->ffn;
  model.seq_length = row.seq;
  model.vocab_size = m->vocab;
  model.activation = m->activation == "swiglu"         ? simulator::Activation::kSwiglu
                     : m->activation == "squared-relu" ? simulator::Activation::kSquaredRelu
                                                       : simulator::Activation::kGelu;
  model.positions =
      learned ? simulator::PositionEmbedding::kLearned : simulator::PositionEmbedding::kRotary;
  // Model::rotary_fraction. ALiBi and no position embedding (the hybrid
  // Nemotron 3 models, Megatron-Bridge MambaModelProvider
  // position_embedding_type "none") apply no RoPE. The Nemotron-3 8B/22B
  // and Nemotron-4 models rotate half of each head: NeMo's NemotronConfig
  // rotary_percent 0.5 (NVIDIA/NeMo @0037ec8cabb7
  // nemo/collections/llm/gpt/model/nemotron.py; HF partial_rotary_factor
  // 0.5). Every other rotary model here rotates the whole head.
  if (m->positions == "alibi" || m->positions == "none") {
    model.rotary_fraction = 0;
  } else if (!learned && m->activation == "squared-relu" &&
             (starts_with(m->name, "nemotron4-") || starts_with(m->name, "nemotron3-8b") ||
              starts_with(m->name, "nemotron3-22b"))) {
    model.rotary_fraction = 0.5;
  }
  model.tied_embeddings = m->tied_embeddings;
  model.linear_bias = m->linear_bias;
  model.activation_clamp = m->activation_clamp;
  // Qwen3 and GPT-OSS: heads x head_dim differs from hidden.
  if (static_cast<int64_t>(m->heads) * m->head_dim != m->hidden) model.head_dim_size = m->head_dim;
  model.sliding_window = m->sliding_window;
  model.full_attention_every = m->sliding_window > 0 ? m->full_attention_every : 0;
  if (moe) {
    model.num_experts = m->moe_experts;
    model.moe_top_k = m->moe_top_k;
    model.moe_ffn_hidden_size = m->moe_expert_ffn;
    model.moe_shared_experts = m->moe_shared_experts;
    model.moe_layer_every = moe_every;
    model.moe_first_dense = moe_first_dense;
    model.moe_router = simulator::MoeRouter::kSoftmax;
    // Dropless, as the published MoE rows ran, except the Blackwell form's
    // "(tokendrop)" rows (RunRow::capacity_factor).
    model.moe_capacity_factor = row.capacity_factor;
  } else if (row.capacity_factor > 0) {
    out.missing.push_back("token dropping on a dense model");
    return true;
  }
  return false;
}

// The plan's layout, schedule, recompute and expert parallelism.
void map_layout(const RunRow& row, bool moe, simulator::Plan* layout) {
  simulator::Plan& plan = *layout;
  plan.tensor_parallel = row.tp;
  plan.pipeline_parallel = row.pp;
  plan.data_parallel = row.dp;       // the file's dp excludes cp: gpus = tp * pp * cp * dp
  plan.context_parallel = row.cp;   // ring attention (Megatron-Core's default cp_comm_type p2p)
  plan.micro_batch_size = row.micro_batch;
  plan.global_batch_size = row.global_batch;
  plan.virtual_stages = row.vp;
  plan.schedule = row.vp > 1 ? simulator::Schedule::kInterleaved : simulator::Schedule::kOneFOneB;
  if (starts_with(row.recompute, "full")) {
    plan.recompute = simulator::Recompute::kFull;
  } else if (starts_with(row.recompute, "selective")) {
    plan.recompute = simulator::Recompute::kSelective;
  } else {
    plan.recompute = simulator::Recompute::kNone;  // "none ..." or "unstated"
  }
  // Megatron-Core recompute_modules named in the column ("... (recompute_
  // modules layernorm moe_act)"); core_attn is the selective recompute. A
  // list given replaces Megatron-Core's default ["core_attn"], so
  // "selective (recompute_modules: layernorm, moe_act)" recomputes only
  // those modules, not the attention core.
  const size_t modules_at = row.recompute.find("recompute_modules");
  if (modules_at != std::string::npos) {
    const std::string modules = row.recompute.substr(modules_at);
    if (plan.recompute == simulator::Recompute::kSelective && !contains(modules, "core_attn")) {
      plan.recompute = simulator::Recompute::kNone;
    }
    if (contains(modules, "core_attn") && plan.recompute == simulator::Recompute::kNone) {
      plan.recompute = simulator::Recompute::kSelective;
    }
    if (contains(modules, "layernorm")) plan.recompute_modules |= simulator::kRecomputeLayernorm;
    if (contains(modules, "moe_act")) plan.recompute_modules |= simulator::kRecomputeMoeAct;
    if (contains(modules, "mla_up_proj")) plan.recompute_modules |= simulator::kRecomputeMlaUpProj;
  }
  plan.sequence_parallel = row.tp > 1;
  plan.flash_attention = true;
  if (moe) {
    // Expert layers fold EP into the tp * cp * dp ranks of a stage with
    // expert TP 1 (the recipes' presets): edp = tp * cp * dp / ep.
    plan.expert_parallel = row.ep;
    plan.expert_tensor_parallel = 1;
    plan.moe_imbalance = 1.0;  // the source forces a balanced token distribution
  }
}

// The plan's sharding (ZeRO stage, FSDP), activation offloading and
// communication overlaps from the fsdp and overlaps columns and the
// sources' recipes. Returns whether the row runs PyTorch FSDP.
bool map_sharding_and_overlaps(const RunRow& row, const std::string& source, bool blackwell,
                               bool moe, simulator::Plan* sharded) {
  simulator::Plan& plan = *sharded;
  const std::string fsdp = lower(row.fsdp);
  if (starts_with(fsdp, "zero") && fsdp.size() > 4 && fsdp[4] >= '1' && fsdp[4] <= '3') {
    plan.zero_stage = fsdp[4] - '0';
    plan.distributed_optimizer = plan.zero_stage == 1;
    const int group = number_after(fsdp, "sharding group");
    if (group > 0 && group < row.dp) plan.fsdp_group = group;
  }
  const std::string ov = lower(row.overlaps);
  // Activation CPU offloading ("cpu_offloading_num_layers=N").
  if (const int offload = number_after(ov, "cpu_offloading_num_layers="); offload > 0) {
    plan.cpu_offload_layers = offload;
    // Megatron-Core hands the offloading to Transformer Engine
    // (get_cpu_offload_context); TE replaced its handler in pull request
    // 1762 ("Activation offloading refactor": a new default synchronization
    // that keeps (l - N) layers' activations at the peak; the old one stays
    // behind NVTE_CPU_OFFLOAD_V1=1, which the Llama recipes do not set).
    // Assumption: the NeMo containers from 26.02 on carry a TE with it (the
    // pull request was still in review in November 2025), 25.09 and 25.11
    // the earlier handler (Plan::cpu_offload_v1).
    if (source == "Megatron-Bridge" &&
        release_version(row.release) >= std::vector<int>{26, 2}) {
      plan.cpu_offload_v1 = false;
    }
  }
  const bool torch_fsdp = plan.zero_stage >= 2 && contains(fsdp, "pytorch fsdp");
  // PyTorch FSDP shards its own flat bf16 parameters; the 1-byte FP8
  // parameters that Plan::fp8_param_gather stands for at ZeRO-3 are
  // Megatron-FSDP's (Transformer Engine Float8Tensors in its uint8 weight
  // buffer, simulator/memory.h). llm-foundry's amp_fp8 and NeMo's PyTorch
  // FSDP rows keep bf16 weights.
  if (torch_fsdp) plan.fp8_param_gather = false;
  // Megatron-FSDP, like PyTorch FSDP, prefetches its gathers and overlaps its
  // reduce-scatters by default (its overlap_grad_reduce / overlap_param_gather).
  const bool megatron_fsdp = plan.zero_stage >= 2 && contains(fsdp, "megatron-fsdp");
  plan.tp_comm_overlap =
      row.tp > 1 && (contains(ov, "tp-comm overlap on") || contains(ov, "--tp-comm-overlap"));
  // Blackwell form: the Megatron-Bridge MoE recipes (Qwen3: CommOverlapConfig(
  // tp_comm_overlap=False), data/h100/README.md) run TP without the overlap.
  if (blackwell && moe) plan.tp_comm_overlap = false;
  plan.overlap_grad_reduce = torch_fsdp || megatron_fsdp || contains(ov, "overlap_grad_reduce") ||
                             contains(ov, "overlap-grad-reduce") || contains(ov, "grad-reduce");
  plan.overlap_param_gather = torch_fsdp || megatron_fsdp || contains(ov, "overlap_param_gather") ||
                              contains(ov, "overlap-param-gather") || contains(ov, "param-gather");
  // Megatron-Core's overlap_moe_expert_parallel_comm: "MoE all-to-all
  // overlap on (...)"; "off", "not set (default off)" and "unstated" leave it
  // off.
  plan.moe_a2a_overlap = moe && (contains(ov, "moe all-to-all overlap on") ||
                                 contains(ov, "moe_a2a_overlap=true") ||
                                 contains(ov, "--overlap-moe-expert-parallel-comm"));
  // NeMo 24.07's performance table states only TP/PP/CP/VP and the batches:
  // the rest is the NeMo-Framework-Launcher 24.07 training configs the rows
  // were run with (data/h100/README.md lists them): the distributed
  // optimizer with gradient-reduce and parameter-gather overlap, TP
  // communication overlap with sequence parallelism.
  if (source == "NeMo" && starts_with(fsdp, "unstated") && starts_with(ov, "unstated")) {
    if (row.dp > 1) {
      plan.zero_stage = 1;
      plan.distributed_optimizer = true;
      plan.overlap_grad_reduce = true;
      plan.overlap_param_gather = true;
    }
    plan.tp_comm_overlap = row.tp > 1;
    // Those configs turn FP8 on with fp8 and fp8_hybrid and set no
    // fp8_params (NeMo-Framework-Launcher examples/training/llama/h100/
    // llama2_13b_fp8.sh and llama3_70b_fp8.sh; the GPT-3 and Nemotron rows
    // are assumed to run alike): bf16 parameters,
    // gathered at 2 bytes (Plan::fp8_param_gather).
    plan.fp8_param_gather = false;
  }
  // Megatron-Bridge rows whose release preset did not match the table
  // (overlaps unstated) but which ran the distributed optimizer: every
  // Megatron-Bridge recipe the file read turns on gradient-reduce and
  // parameter-gather overlap with it (TP and MoE all-to-all overlap stay off).
  if (source == "Megatron-Bridge" && plan.zero_stage == 1 && starts_with(ov, "unstated")) {
    plan.overlap_grad_reduce = true;
    plan.overlap_param_gather = true;
  }
  return torch_fsdp;
}

// The defaults of the sources' recipes: dropout, fused cross entropy, RoPE
// fusion, the pipeline split, the gradient dtype and bucket.
void map_recipe_defaults(const RunRow& row, const ModelRow& model_row, const std::string& source,
                         bool blackwell, bool torch_fsdp, simulator::Plan* recipe) {
  simulator::Plan& plan = *recipe;
  const ModelRow* m = &model_row;
  const std::string ov = lower(row.overlaps);
  // Llama-style models (SwiGLU) train without dropout in NeMo's and
  // Megatron-Bridge's recipes (hidden and attention dropout 0), and so do
  // the Nemotron models (squared ReLU): NeMo-Framework-Launcher
  // conf/training/nemotron/nemotron_8b.yaml and nemotron_340b.yaml set
  // hidden_dropout, attention_dropout and ffn_dropout to 0.0.
  if ((source == "NeMo" || source == "Megatron-Bridge" || blackwell) &&
      (m->activation == "swiglu" || m->activation == "squared-relu")) {
    plan.dropout = false;
  }
  // llm-foundry's MPT recipes train without dropout (resid/emb/attn pdrop 0)
  // and with flash-attn's fused cross-entropy (loss_fn fused_crossentropy):
  // no dropout masks, and the logits' gradient computed in place.
  if (source == "llm-foundry") {
    plan.dropout = false;
    plan.fused_cross_entropy = true;
  }
  // Megatron-Bridge trains with Megatron-Core's fused cross entropy in
  // Transformer Engine's implementation: GPTModelProvider defaults
  // cross_entropy_loss_fusion to True (NVIDIA-NeMo/Megatron-Bridge
  // @0254ddd4418307d47f3d5fab32cdfdb29926b4d6
  // src/megatron/bridge/models/gpt_provider.py), and the performance
  // scripts set cross_entropy_fusion_impl = "te" for every workload
  // (@2afd2d34f7d7 scripts/performance/utils/overrides.py,
  // _set_common_perf_overrides). TE's parallel_cross_entropy keeps only the
  // bf16 logits and writes their gradient into them in place
  // (NVIDIA/TransformerEngine @02965d2eba9d
  // transformer_engine/pytorch/cross_entropy.py, CrossEntropyFunction):
  // no fp32 copy (Plan::fused_cross_entropy).
  if (source == "Megatron-Bridge") plan.fused_cross_entropy = true;
  // RoPE fusion (Plan::rope_fusion, default on). The Megatron-Bridge
  // performance scripts set apply_rope_fusion = True for every workload
  // (scripts/performance/utils/overrides.py, _set_common_perf_overrides), and
  // NeMo 2's LlamaConfig and performance scripts (pretrain_qwen3_*,
  // pretrain_llama4_*) set it too. But GPTModelProvider.provide() then calls
  // fusions.validate_rope_fusion_compatibility, which turns it off for any
  // position_embedding_type but "rope" (NVIDIA-NeMo/Megatron-Bridge
  // @25bc0688cf07 src/megatron/bridge/utils/fusions.py), and GPT-OSS's
  // provider sets "yarn" (models/gpt_oss/gpt_oss_provider.py @12bc34a8ee30):
  // its rows run Megatron-Core's eager RoPE. Assumption: every release the
  // GPT-OSS rows cite has that check (one older stored fusions.py, which also
  // rejects MLA, has no type check; which releases carried it is not in the
  // stored sources). Nemotron rows under NeMo are mapped fused (the
  // default); NeMo's NemotronConfig does not set apply_rope_fusion, and no
  // stored NeMo performance script for them was read.
  if ((source == "Megatron-Bridge" || blackwell) && starts_with(m->name, "gpt-oss")) {
    plan.rope_fusion = false;
  }
  if (contains(ov, "account_for_embedding_loss_in_pipeline_split")) {
    plan.account_for_embedding_in_pipeline_split = true;
    plan.account_for_loss_in_pipeline_split = true;
  }
  // Megatron-Core's grad_reduce_in_fp32 = False (bf16 gradient buffer).
  if (contains(ov, "grad_reduce_in_fp32=false")) plan.grad_reduce_in_fp32 = false;
  // Megatron-Core's default gradient bucket: 40M parameters of gradients
  // (fp32, or bf16 without grad_reduce_in_fp32).
  if (plan.overlap_grad_reduce && !torch_fsdp) {
    plan.grad_bucket_bytes = 40'000'000LL * (plan.grad_reduce_in_fp32 ? 4 : 2);
  }
}

}  // namespace

Result<PublishedRun> map_published_run(const RunRow& row, const std::vector<ModelRow>& models,
                                       const std::string& file, const presets::Catalog& catalog,
                                       const std::string& cluster) {
  const std::string where = file + ":" + std::to_string(row.line);
  // The Blackwell form: each row names its own cluster (RunRow::cluster).
  const bool blackwell = !row.cluster.empty() || !row.release.empty();
  const auto m = std::find_if(models.begin(), models.end(),
                              [&](const ModelRow& x) { return x.name == row.model; });
  PublishedRun out = run_header(row, file, blackwell);
  if (m == models.end()) {
    if (!blackwell) {
      return Status::not_found(where + ": column \"model\": \"" + row.model +
                               "\" is not in the models table");
    }
    out.missing = row.missing;
    out.missing.push_back("model " + row.model + " not in the models table");
    return out;
  }
  out.missing = row.missing;
  if (blackwell && !row.cluster.empty() && !catalog.cluster(row.cluster).ok()) {
    out.missing.push_back("cluster preset " + row.cluster);
  }
  simulator::Precision precision = simulator::Precision::kBf16;
  simulator::Fp8Recipe recipe = simulator::Fp8Recipe::kDelayed;
  map_precision(row, blackwell, &precision, &recipe, &out.missing);
  for (const std::string& f : m->missing_features) out.missing.push_back(f);
  const bool moe = m->moe_experts > 0;
  if (row.ep > 1 && !moe) out.missing.push_back("ep > 1 on a dense model");
  if (!m->preset.empty()) {
    LLMPLAN_ASSIGN_OR_RETURN(const bool done, map_preset_model(row, &*m, moe, catalog, &out));
    if (done) return out;
  } else if (map_table_model(row, &*m, moe, &out)) {
    return out;
  }

  simulator::Plan& plan = out.config.plan;
  map_layout(row, moe, &plan);
  plan.precision = precision;
  plan.fp8_recipe = recipe;
  const bool torch_fsdp = map_sharding_and_overlaps(row, out.source, blackwell, moe, &plan);
  map_recipe_defaults(row, *m, out.source, blackwell, torch_fsdp, &plan);

  LLMPLAN_ASSIGN_OR_RETURN(out.config.cluster,
                           catalog.cluster(row.cluster.empty() ? cluster : row.cluster));
  const int per_node = number_after(row.gpus_per_node, "");
  if (per_node > 0) out.config.cluster.gpus_per_node = per_node;
  // The Megatron-Bridge MoE recipes' dispatcher and pipeline split (#27).
  apply_moe_recipe(MoeRecipeRow{row.model, out.source, row.gpus, row.release}, &out.config);
  Status valid = presets::validate(out.config);
  if (!valid.ok() && blackwell) {
    // A published layout the simulator's checks refuse is a row the mapping
    // cannot use (listed), not an error of the file.
    out.missing.push_back("invalid layout (" + valid.message() + ")");
    out.config = presets::SimConfig();
    return out;
  }
  if (!valid.ok()) return valid.with_prefix(where + ": " + row.name);
  return out;
}

}  // namespace llmplan::planner

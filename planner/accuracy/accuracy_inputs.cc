// The measured rows as accuracy cases (accuracy_inputs.h).
#include "planner/accuracy/accuracy_inputs.h"

#include <algorithm>
#include <memory>

#include "planner/accuracy/accuracy_json.h"
#include "planner/accuracy/measured_csv.h"

namespace llmplan::planner {
namespace {

// Applies the constants file `o` names (if any) to every case.
Status apply_constants_file(const AccuracyInputs& o, std::vector<AccuracyCase>* cases,
                            std::vector<std::string>* notes) {
  if (!o.constants.empty()) {
    AccuracyConstants k = constants_of(cases->front());
    LLMPLAN_RETURN_IF_ERROR(read_constants_file(o.constants, &k));
    apply_constants(k, cases);
    notes->push_back("constants from " + o.constants);
  }
  return Status();
}

// Runs files whose rows name their own cluster: keeps the cases (and the
// runs listed beside them) of GPU --gpu.
Status select_gpu_rows(const AccuracyInputs& o, const presets::Catalog& catalog,
                       std::vector<AccuracyCase>* cases, std::vector<PublishedRun>* runs,
                       std::vector<std::string>* notes) {
  LLMPLAN_RETURN_IF_ERROR(catalog.gpu(o.gpu).status());
  const size_t before = cases->size();
  std::erase_if(*cases,
                [&](const AccuracyCase& c) { return c.config.cluster.gpu.name != o.gpu; });
  // The runs listed beside the cases (the reports walk both in step): the
  // rows of other GPUs go too, expressible or not (a row whose cluster is
  // not a preset stays, listed with its reason).
  std::erase_if(*runs, [&](const PublishedRun& r) {
    if (r.missing.empty()) return r.config.cluster.gpu.name != o.gpu;
    const Result<simulator::Cluster> c = catalog.cluster(r.cluster);
    return c.ok() && c->gpu.name != o.gpu;
  });
  if (cases->empty()) {
    return Status::invalid_argument("--gpu: no expressible row of " + o.files.front() +
                                    " ran on GPU " + o.gpu);
  }
  notes->push_back("--gpu " + o.gpu + ": the " + std::to_string(cases->size()) +
                   " expressible rows on " + o.gpu + "; " +
                   std::to_string(before - cases->size()) +
                   " expressible rows of other GPUs ignored");
  return Status();
}

// Replaces every case's cluster (keeping its GPUs per node) and GPU by
// --cluster / --gpu where given.
Status override_clusters(const AccuracyInputs& o, const presets::Catalog& catalog,
                         std::vector<AccuracyCase>* cases, std::vector<std::string>* notes) {
  for (AccuracyCase& c : *cases) {
    if (!o.cluster.empty()) {
      const int per_node = c.config.cluster.gpus_per_node;
      LLMPLAN_ASSIGN_OR_RETURN(c.config.cluster, catalog.cluster(o.cluster));
      c.config.cluster.gpus_per_node = per_node;
    }
    if (!o.gpu.empty()) {
      LLMPLAN_ASSIGN_OR_RETURN(c.config.cluster.gpu, catalog.gpu(o.gpu));
    }
  }
  notes->push_back("cluster / GPU from --cluster / --gpu");
  return Status();
}

// The notes on how a published-runs row is mapped (`own_clusters`: the
// rows name their cluster, the Blackwell form).
void add_runs_mapping_notes(bool own_clusters, std::vector<std::string>* notes) {
  notes->push_back(
      std::string("mapping of a published-runs row (planner/accuracy/runs_file.h): ") +
      (own_clusters ? "each row's own cluster (below)" : "cluster dgx-h100, 8 GPUs per node") +
      "; bf16; flash attention; interleaved 1F1B when vp > 1; sequence parallelism "
      "whenever tp > 1 (Megatron-Core recipes; --tp-comm-overlap requires it); fsdp zeroN -> "
      "ZeRO stage N (a sharding group smaller than dp -> hybrid sharding); PyTorch FSDP rows "
      "overlap parameter all-gathers and gradient reduce-scatters with compute (FSDP issues them "
      "on a separate stream and the host runs ahead); Megatron rows overlap what their overlaps "
      "column states, gradient buckets of 40M parameters; unstated recompute -> none");
  notes->push_back(
      "MoE rows: experts, top-k, expert FFN and layer pattern from the models table, ep from the "
      "row with expert TP 1 (expert-data-parallel = tp x cp x dp / ep), dropless and balanced "
      "(the source forces balance), MoE all-to-all overlap where the overlaps column says it is "
      "on; GPT-OSS: sliding window 128 on alternating layers, its gated quick_gelu costed as "
      "SwiGLU plus the clamp Megatron-Core runs unfused before it (\"clamp\" in the shape notes, "
      "kernel moe_act_clamp); selective recompute of layernorm / moe_act -> selective");
  notes->push_back(
      "RoPE (kernel rope): fused (Transformer Engine) except GPT-OSS's Megatron-Bridge rows, "
      "which run Megatron-Core's eager RoPE (the bridge turns apply_rope_fusion off for its yarn "
      "embedding); Nemotron-3 8B/22B and Nemotron-4 rotate half of each head; alibi / none "
      "rows (hybrid Nemotron 3) apply none");
  notes->push_back("rows with features the simulator lacks (other precisions or activations, "
                   "an MoE layer pattern it cannot read) are counted and listed, not simulated");
  if (own_clusters) {
    notes->push_back(
        "Blackwell form (data/blackwell/README.md): each row on its own cluster (DGX-B200 -> "
        "dgx-b200, DGX-GB200 / GB200 NVL72 -> gb200-nvl72); step time = global_batch x seq / "
        "(tokens/s/GPU x GPUs); distributed optimizer with gradient-reduce and parameter-gather "
        "overlap, TP-comm overlap where tp > 1, Megatron-FSDP where the notes say FSDP (with "
        "the recipes' activation CPU offloading on GB200 FP8), recompute only where the recipe "
        "names recompute_modules (GPT-OSS 120B, DeepSeek-V3, Nemotron 3 Super on B200), MoE "
        "all-to-all overlap only where the "
        "Megatron-Bridge performance recipe sets it (planner/accuracy/runs_file.h); "
        "(tokendrop) rows with capacity factor 1; the dgxc-benchmarking row is reserved "
        "(a blind test) and never fitted nor counted");
  }
}

}  // namespace

Result<bool> reads_runs_files(const AccuracyInputs& o) {
  LLMPLAN_ASSIGN_OR_RETURN(const bool first, is_runs_file(o.files.front()));
  for (const std::string& f : o.files) {
    LLMPLAN_ASSIGN_OR_RETURN(const bool runs, is_runs_file(f));
    if (runs != first) {
      return Status::invalid_argument(f + ": mixes a runs file and a vTrain measured CSV; give "
                                          "files of one kind");
    }
  }
  if (!first && !o.models.empty()) {
    return Status::invalid_argument("--models: only for runs files (published_runs.csv layout)");
  }
  return first;
}

Result<std::vector<AccuracyCase>> load_runs_cases(const AccuracyInputs& o,
                                                  std::vector<PublishedRun>* runs,
                                                  std::vector<std::string>* notes,
                                                  std::string* gpu_name) {
  LLMPLAN_ASSIGN_OR_RETURN(presets::Catalog catalog, o.presets.load_catalog());
  for (const std::string& file : o.files) {
    LLMPLAN_ASSIGN_OR_RETURN(std::vector<PublishedRun> r, read_runs_file(file, o.models, catalog));
    for (PublishedRun& x : r) runs->push_back(std::move(x));
  }
  std::vector<AccuracyCase> cases = make_runs_cases(*runs);
  if (cases.empty()) {
    return Status::invalid_argument(o.files.front() +
                                    ": no row the simulator can express (see the missing "
                                    "features with --folds 0)");
  }
  // Runs files whose rows name their own cluster (the Blackwell form):
  // --gpu selects the rows of that GPU kind instead of replacing the GPU.
  const bool own_clusters = std::any_of(runs->begin(), runs->end(),
                                        [](const PublishedRun& r) { return !r.cluster.empty(); });
  if (own_clusters && !o.gpu.empty() && o.cluster.empty()) {
    LLMPLAN_RETURN_IF_ERROR(select_gpu_rows(o, catalog, &cases, runs, notes));
  } else if (!o.cluster.empty() || !o.gpu.empty()) {
    LLMPLAN_RETURN_IF_ERROR(override_clusters(o, catalog, &cases, notes));
  }
  LLMPLAN_RETURN_IF_ERROR(apply_constants_file(o, &cases, notes));
  *gpu_name = cases.front().config.cluster.gpu.name;
  add_runs_mapping_notes(own_clusters, notes);
  return cases;
}

Result<std::vector<AccuracyCase>> load_measured_cases(const AccuracyInputs& o,
                                                      std::vector<std::string>* notes,
                                                      std::string* gpu_name) {
  LLMPLAN_ASSIGN_OR_RETURN(presets::Catalog catalog, o.presets.load_catalog());
  std::unique_ptr<simulator::GpuSpec> gpu;
  if (!o.gpu.empty() || !o.cluster.empty()) {
    LLMPLAN_ASSIGN_OR_RETURN(simulator::Cluster c,
                             o.presets.resolve_cluster(catalog, o.cluster, o.gpu));
    gpu = std::make_unique<simulator::GpuSpec>(c.gpu);
    notes->push_back("GPU " + c.gpu.name + " (from --gpu/--cluster) with vTrain's link bandwidths");
  }
  std::vector<AccuracyCase> all;
  for (const std::string& file : o.files) {
    LLMPLAN_ASSIGN_OR_RETURN(std::vector<MeasuredRun> runs, read_measured_csv_file(file));
    LLMPLAN_ASSIGN_OR_RETURN(std::vector<AccuracyCase> cases,
                             make_accuracy_cases(runs, file, catalog, gpu.get()));
    for (AccuracyCase& c : cases) all.push_back(std::move(c));
  }
  LLMPLAN_RETURN_IF_ERROR(apply_constants_file(o, &all, notes));
  *gpu_name = all.front().config.cluster.gpu.name;
  const simulator::MeasuredCollectives& curves = all.front().config.cluster.collectives;
  if (!curves.empty()) {
    notes->push_back("in-node all-reduce from the measured curves \"" + curves.name +
                     "\" (vTrain's nccl-tests LUT); other collectives from the alpha-beta "
                     "formula");
  }
  notes->push_back(
      "conditions (vTrain's data): fp16, full recomputation, 1F1B, no gradient bucketing "
      "(all-reduce after the backward), 8 GPUs per node, vocab 50257, learned positions, GeLU "
      "4h, unfused softmax attention (no flash attention: Megatron-DeepSpeed of that era), "
      "intra-node 150 GB/s, inter-node 800 Gb/s per node; the row's micro batch is kept "
      "also at p = 1 (vTrain's loader would use global / d)");
  return all;
}

}  // namespace llmplan::planner

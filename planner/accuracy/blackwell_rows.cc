// The Blackwell form of runs files (runs_file.h,
// read_blackwell_runs_rows_text): each row read onto the H100 form's
// columns (RunRow), with the Megatron-Bridge performance recipes' sharding,
// overlaps and recompute.
#include <algorithm>
#include <cctype>
#include <utility>

#include "base/csv.h"
#include "planner/accuracy/runs_cells.h"
#include "planner/accuracy/runs_file.h"

namespace llmplan::planner {

using namespace runs_cells;  // NOLINT(google-build-using-namespace): the cell readers

namespace {

// The columns of kBlackwellColumns, in order.
enum BlackwellColumn {
  kSource, kContainer, kSystem, kGpus, kModel, kSeq, kPrec, kTp, kPp, kCp, kVp, kEp, kEtp,
  kDp, kMicro, kGlobal, kTps
};

// The row's counts: GPUs, layout and batches (a blank or malformed cell is
// a row the mapping cannot use, listed, not an error of the file), its
// expert TP in *etp_out; returns its tokens/s per GPU (0 when not stated).
double read_counts(const csv::CsvReader& reader, const std::vector<size_t>& col, RunRow* row,
                   int* etp_out) {
  RunRow& r = *row;
  const auto count = [&](size_t c, int blank) {
    const std::string& v = reader.cell(col[c]);
    const std::string l = lower(v);
    if (v.empty() || l == "n/a") return blank;
    int x = 0;
    for (char ch : v) {
      if (!std::isdigit(static_cast<unsigned char>(ch)) || x > 10000000) return -1;
      x = x * 10 + (ch - '0');
    }
    return x;
  };
  r.gpus = count(kGpus, 0);
  r.seq = count(kSeq, 0);
  r.tp = count(kTp, 1);
  r.pp = count(kPp, 1);
  r.cp = count(kCp, 1);
  r.vp = count(kVp, 1);   // "n/a": not interleaved
  r.ep = count(kEp, 1);
  const int etp = count(kEtp, 1);  // blank: expert TP 1 (the recipes' presets)
  r.dp = count(kDp, 0);
  r.micro_batch = count(kMicro, 0);
  r.global_batch = count(kGlobal, 0);
  const std::string& tps_cell = reader.cell(col[kTps]);
  double tps = 0;
  if (!tps_cell.empty()) {
    Result<double> v = reader.number(col[kTps]);
    if (v.ok()) tps = *v;
  }
  *etp_out = etp;
  return tps;
}

// The system's cluster preset, the reserved source, the precision.
void map_system_and_precision(const csv::CsvReader& reader, const std::vector<size_t>& col,
                              RunRow* row) {
  RunRow& r = *row;
  // The system's cluster preset.
  const std::string sys = lower(r.system);
  if (sys == "dgx-b200") {
    r.cluster = "dgx-b200";
  } else if (sys == "dgx-gb200" || sys == "gb200 nvl72" || sys == "gb200") {
    r.cluster = "gb200-nvl72";
  } else {
    r.missing.push_back("system " + r.system);
  }
  // NVIDIA dgxc-benchmarking is reserved in this project as a blind test:
  // its row is kept in the file but never fitted nor counted.
  if (contains(lower(r.source), "dgxc-benchmarking")) r.missing.push_back("reserved source");
  // Precision.
  const std::string prec = lower(reader.cell(col[kPrec]));
  if (contains(prec, "variant in parentheses")) {
    r.missing.push_back("precision FP8 variant unstated");
  } else if (starts_with(prec, "bf16")) {
    r.precision = "bf16";
  } else if (starts_with(prec, "fp8-mx") || starts_with(prec, "mxfp8")) {
    r.precision = "fp8-mx";
  } else if (starts_with(prec, "fp8")) {
    r.precision = "fp8-current";
  } else if (starts_with(prec, "nvfp4")) {
    r.precision = "nvfp4";
  } else {
    r.missing.push_back("precision " + reader.cell(col[kPrec]));
  }
}

// The model variants (token drop, MTP) and the checks of the stated layout
// and batches; the measured step from tokens/s.
void check_row(const std::string& notes, const std::string& model_l, int etp, double tps,
               RunRow* row) {
  RunRow& r = *row;
  // Model variants.
  if (contains(model_l, "(tokendrop)")) {
    r.capacity_factor = 1.0;  // Megatron-Bridge token-drop recipes: capacity factor 1.0
  }
  // DeepSeek-V3's MTP variants (Megatron-Bridge performance summaries):
  // one MTP layer, or none; the plain rows run the preset's.
  if (contains(model_l, "(w/ mtp)")) r.mtp_layers = 1;
  if (contains(model_l, "(w/o mtp)")) r.mtp_layers = 0;
  if (etp < 0 || etp > 1) r.missing.push_back("expert tensor parallelism > 1");
  // Known problems of the sources.
  if (contains(notes, "swapped") && r.global_batch > 0 && r.global_batch < r.micro_batch) {
    std::swap(r.global_batch, r.micro_batch);  // as the notes' GA and DP imply
  }
  bool layout_ok = true;
  for (int v : {r.gpus, r.tp, r.pp, r.cp, r.vp, r.ep, r.dp}) layout_ok = layout_ok && v > 0;
  const bool batch_ok = r.micro_batch > 0 && r.global_batch > 0;
  const bool counts_ok = layout_ok && batch_ok;
  if (!layout_ok) r.missing.push_back("layout not stated");
  if (!batch_ok) r.missing.push_back("batch sizes not stated");
  if (r.seq <= 0) r.missing.push_back("seq not stated");
  // (The 25.04.rc2 long-sequence table gives model TFLOPs only.)
  if (!(tps > 0)) r.missing.push_back("tokens/s not stated");
  if (layout_ok && static_cast<double>(r.tp) * r.pp * r.cp * r.dp != r.gpus) {
    r.missing.push_back("inconsistent layout (tp x pp x cp x dp != GPUs)");
  }
  // The notes' gradient accumulation ("GA=N") must agree with the batches.
  const int ga = number_after(notes, "ga=");
  if (counts_ok && (r.global_batch % (static_cast<int64_t>(r.micro_batch) * r.dp) != 0 ||
                    (ga > 0 && static_cast<int64_t>(r.micro_batch) * r.dp * ga !=
                                   r.global_batch))) {
    r.missing.push_back("inconsistent batch (GBS != MBS x DP x GA)");
  }
  if (counts_ok && r.seq > 0 && tps > 0) {
    r.measured_step_s = static_cast<double>(r.global_batch) * r.seq / (tps * r.gpus);
  }
}

// Sharding, recompute and overlaps: the Megatron-Bridge performance
// recipes (runs_file.h), read at NVIDIA-NeMo/Megatron-Bridge
//   @2afd2d34f7d7 scripts/performance/utils/utils.py (WorkloadBaseConfig:
//     recompute_modules / recompute_num_layers None, moe_a2a_overlap False),
//   @00919dcf1fe1 scripts/performance/configs/llama/llama3_workload_base_configs.py
//     (Llama 3 8B / 70B on B200 and GB200: no recompute; 70B BF16 / FP8-CS
//     use_megatron_fsdp, with cpu_offloading_num_layers, not modelled),
//   @01b2977e518f scripts/performance/configs/qwen/qwen3_workload_base_configs.py
//     (Qwen3 on B200 / GB200: no recompute, moe_a2a_overlap False),
//   @07eea52d4523 scripts/performance/configs/gpt_oss/gpt_oss_workload_base_configs.py
//     (GPT-OSS 120B on B200 / GB200: recompute_modules [layernorm, moe_act];
//     GB200 at GBS 1280: moe_a2a_overlap True, and the MXFP8 one
//     recompute_modules []).
// Distributed optimizer with gradient-reduce / parameter-gather overlap and
// TP-comm overlap for dense models with tp > 1: what the H100 file read from
// the same repository's Llama recipes (data/h100/README.md); MoE recipes
// turn TP-comm overlap off (map_published_run).
void map_sharding_and_overlaps(const std::string& notes, RunRow* row) {
  RunRow& r = *row;
  const int fsdp = number_after(notes, "fsdp=");
  std::string offload_flag;  // " cpu_offloading_num_layers=N" for the overlaps column
  if (fsdp > 0) {
    r.fsdp = "zero3 Megatron-FSDP";
    // The Megatron-FSDP recipes of these models offload activations of
    // some layers to host memory (cpu_offloading_num_layers: Llama 3 70B
    // GB200 BF16 20, FP8-CS 40, B200 FP8-CS 5; Llama 3.1 405B GB200 FP8-CS
    // 92; @00919dcf1fe1 llama3_workload_base_configs.py, @0013c9a8ed4d
    // llama31_workload_base_configs.py): Plan::cpu_offload_layers. Every
    // such row of the file is GB200 FP8 (current scaling): 40 and 92. The
    // NeMo 25.04 / 25.07 FSDP rows (micro-batch 1) are read likewise, an
    // assumption: their recipes are not in the stored sources.
    if (r.cluster == "gb200-nvl72" && starts_with(r.precision, "fp8")) {
      if (r.model == "llama3-70b") offload_flag = " cpu_offloading_num_layers=40";
      if (r.model == "llama3.1-405b") offload_flag = " cpu_offloading_num_layers=92";
    }
    if ((r.model == "llama3-70b" || r.model == "llama3.1-405b") && offload_flag.empty()) {
      r.missing.push_back("activation CPU offloading");
    }
  } else {
    r.fsdp = "zero1";
  }
  r.overlaps = "overlap_grad_reduce overlap_param_gather";
  r.overlaps += offload_flag;
  // The Llama performance scripts turn TP-comm overlap off for NVFP4
  // (@0013c9a8ed4d scripts/performance/configs/llama/llama31_llm_pretrain.py
  // and @2a0d46e2c554 llama3_llm_pretrain.py: "tp_comm_overlap = False if
  // precision == 'nvfp4'").
  if (r.tp > 1 && r.precision != "nvfp4") r.overlaps += " --tp-comm-overlap";
  // Llama 3.1 405B NVFP4 on 256 GB200 (the V2 preset, GBS 1536) runs
  // without parameter-gather overlap (llama31_llm_pretrain.py
  // disable_param_gather_overlap, "to reduce training peak memory and
  // avoid OOM", Megatron-Bridge issue 3714).
  if (r.model == "llama3.1-405b" && r.precision == "nvfp4" && r.gpus == 256 &&
      r.global_batch == 1536 && r.cluster == "gb200-nvl72") {
    r.overlaps = "overlap_grad_reduce";
  }
  // Every Megatron-Bridge performance recipe of these models keeps bf16
  // gradients (set_llama3_common_configs, set_llama31_common_configs,
  // set_qwen3_common_configs, set_gpt_oss_common_configs in
  // scripts/performance/configs/*: cfg.ddp.grad_reduce_in_fp32 = False;
  // read at @2a0d46e2c554, @0013c9a8ed4d, @0501207b95db). So do the NeMo
  // 2.0 performance scripts the 25.02-25.07 rows ran, all of them FP8:
  // NVIDIA/NeMo scripts/performance/helpers.py set_precision_configs sets
  // recipe.trainer.plugins.grad_reduce_in_fp32 = False for every FP8
  // recipe (@02a0e6a5dc42; the earlier per-model scripts, e.g.
  // pretrain_mixtral_8x22b.py, "grad_reduce_in_fp32 = False  # bf16 grad
  // dtype"), and the model recipes' performance mode does too
  // (nemo/collections/llm/recipes/nemotron4_340b.py @01d03c17ac58
  // pretrain_performance_optimizations).
  const std::string release = lower(r.release);
  if (contains(release, "megatron-bridge") ||
      (starts_with(release, "nemo 25.") && starts_with(r.precision, "fp8"))) {
    r.overlaps += " grad_reduce_in_fp32=False";
  }
  // Megatron-Bridge's Llama 3.1 405B recipe splits the pipeline counting
  // the embedding and the loss as one layer each (126 + 2 = 128 layers;
  // src/megatron/bridge/recipes/llama/llama3.py@0d5f5558c16f
  // llama31_405b_pretrain_config: account_for_embedding_in_pipeline_split
  // and account_for_loss_in_pipeline_split True), which makes PP 16 x VP 8
  // possible.
  if (r.model == "llama3.1-405b" && contains(lower(r.release), "megatron-bridge")) {
    r.overlaps += " account_for_embedding_loss_in_pipeline_split";
  }
}

// The recipes' recompute (GPT-OSS 120B, Nemotron 3 Super on B200) and
// GPT-OSS's MoE all-to-all overlap on GB200.
void map_recompute(RunRow* row) {
  RunRow& r = *row;
  r.recompute = "none";
  const bool gb200 = r.cluster == "gb200-nvl72";
  if (r.model == "gpt-oss-120b") {
    const bool gbs1280 = r.global_batch == 1280;
    // recompute_modules [layernorm, moe_act] (not core_attn): the MoE
    // norm's output and the experts' FC2 input are rebuilt in the
    // backward (Plan::recompute_modules).
    r.recompute = gb200 && gbs1280 && r.precision == "fp8-mx"
                      ? "none"
                      : "none (recompute_modules layernorm moe_act)";
    if (gb200 && gbs1280) r.overlaps += " moe_a2a_overlap=True";
  }
  // Nemotron 3 Super on B200 at TP 1, MXFP8: recompute_modules
  // [moe_act, layernorm] (Megatron-Bridge @f601ba97141a
  // scripts/performance/configs/nemotronh/nemotron_3_workload_base_configs.py
  // BASE_NEMOTRON_3_SUPER_CONFIG_B200, TP 1 x EP 64 as the rows ran;
  // NEMOTRON_3_SUPER_PRETRAIN_CONFIG_B200_FP8_MX_V1 is that base). The same
  // version's GB200 presets run TP 2 x EP 64, as the GB200 rows did, and
  // recompute nothing (not mapped: nothing to map). An earlier version
  // (@06e8da4ede24) added core_attn on B200 but ran EP 8 there and TP 1 on
  // GB200, neither the rows' layout. Its B200 BF16 preset also recomputes
  // "moe" (the whole MoE block, not modelled); no B200 BF16 row of this
  // model is in the file.
  if (r.model == "nemotron3-super" && r.cluster == "dgx-b200" && r.tp == 1 &&
      r.precision == "fp8-mx") {
    r.recompute = "none (recompute_modules layernorm moe_act)";
  }
}

// The row's name: model, system, release, precision, GPUs, line.
void name_row(RunRow* row) {
  RunRow& r = *row;
  std::string rel = r.release.substr(0, r.release.find(" ("));
  for (char& c : rel) c = c == ' ' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  r.name = r.model + (r.capacity_factor > 0 ? "-tokendrop" : "") + "_" + lower(r.system) + "_" +
           rel + "_" + (r.precision.empty() ? std::string("other") : r.precision) + "_" +
           std::to_string(r.gpus) + "gpu_l" + std::to_string(r.line);
  for (char& c : r.name) {
    if (c == ' ') c = '-';
  }
}

}  // namespace

Result<std::vector<RunRow>> read_blackwell_runs_rows_text(std::string_view text,
                                                          const std::string& source_name) {
  csv::CsvReader reader(text, source_name, kMaxRunsFileRows);
  LLMPLAN_RETURN_IF_ERROR(reader.read_header());
  LLMPLAN_ASSIGN_OR_RETURN(
      const std::vector<size_t> col,
      find_columns(reader,
                   std::vector<const char*>(std::begin(kBlackwellColumns),
                                            std::end(kBlackwellColumns)),
                   source_name));
  const size_t notes_col = optional_column(reader, "notes");
  return read_rows<RunRow>(reader, source_name,
                           [&](const std::vector<RunRow>&, RunRow* row) -> Status {
    RunRow& r = *row;
    r.source = reader.cell(col[kSource]);
    r.release = reader.cell(col[kContainer]);
    r.system = reader.cell(col[kSystem]);
    const std::string notes = notes_col == kNoColumn ? "" : lower(reader.cell(notes_col));
    const std::string model_cell = reader.cell(col[kModel]);
    const std::string model_l = lower(model_cell);
    r.model = blackwell_model_name(model_cell);
    int etp = 1;
    const double tps = read_counts(reader, col, &r, &etp);
    map_system_and_precision(reader, col, &r);
    check_row(notes, model_l, etp, tps, &r);
    map_sharding_and_overlaps(notes, &r);
    map_recompute(&r);
    name_row(&r);
    return Status();
  });
}

}  // namespace llmplan::planner

#include "planner/accuracy/runs_file.h"

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <map>

#include "planner/accuracy/moe_recipes.h"
#include "base/csv.h"
#include "base/input_file.h"
#include "simulator/plan_json.h"
#include "base/strict_json.h"

namespace llmplan::planner {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// The index of each named column in the header; InvalidArgument naming the
// first one missing.
Result<std::vector<size_t>> find_columns(const csv::CsvReader& reader,
                                         const std::vector<const char*>& names,
                                         const std::string& source_name) {
  std::vector<size_t> out;
  for (const char* n : names) {
    const auto& h = reader.header();
    const auto it = std::find(h.begin(), h.end(), n);
    if (it == h.end()) {
      return Status::invalid_argument(source_name + ":" + std::to_string(reader.header_line()) +
                                      ": missing column \"" + n + "\"");
    }
    out.push_back(static_cast<size_t>(it - h.begin()));
  }
  return out;
}

// The index of an optional column, or kNoColumn.
constexpr size_t kNoColumn = static_cast<size_t>(-1);
size_t optional_column(const csv::CsvReader& reader, const char* name) {
  const auto& h = reader.header();
  const auto it = std::find(h.begin(), h.end(), name);
  return it == h.end() ? kNoColumn : static_cast<size_t>(it - h.begin());
}

Result<int> positive(const csv::CsvReader& r, size_t column, bool zero_ok = false) {
  LLMPLAN_ASSIGN_OR_RETURN(int v, r.integer(column));
  if (v < 0 || (v == 0 && !zero_ok)) {
    return Status::parse_error(r.where(column) + ": must be " +
                               (zero_ok ? "non-negative" : "positive") + ", got " + r.cell(column));
  }
  return v;
}

Result<bool> boolean(const csv::CsvReader& r, size_t column) {
  const std::string v = lower(r.cell(column));
  if (v == "true") return true;
  if (v == "false") return false;
  return Status::parse_error(r.where(column) + ": expected true or false, got \"" + r.cell(column) +
                             "\"");
}

// The first integer after `marker` in `text`, or 0.
int number_after(std::string_view text, std::string_view marker) {
  size_t at = text.find(marker);
  if (at == std::string_view::npos) return 0;
  at += marker.size();
  while (at < text.size() && !std::isdigit(static_cast<unsigned char>(text[at]))) {
    if (text[at] != ' ' && text[at] != '=') return 0;
    ++at;
  }
  int v = 0;
  while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at])) && v < 100000000) {
    v = v * 10 + (text[at++] - '0');
  }
  return v;
}

// The sliding window of a models-table row from its shape notes: the
// window from "sliding-window attention (window N)", the period of the
// full-attention layers from "window_attn_skip_freq K" (Megatron-Core's
// option) or 2 for "alternating layers"; 0, 0 when the notes state no
// window.
void window_from_notes(std::string_view notes_cell, int* window, int* full_every) {
  const std::string notes = lower(notes_cell);
  *window = number_after(notes, "sliding-window attention (window");
  *full_every = 0;
  if (*window <= 0) {
    *window = 0;
    return;
  }
  *full_every = number_after(notes, "window_attn_skip_freq");
  if (*full_every <= 0 && contains(notes, "alternating layers")) *full_every = 2;
}

// The features of "missing features: A (...); B (...). More text." in a
// models table's shape notes (ModelRow::missing_features).
std::vector<std::string> missing_from_notes(std::string_view notes_cell) {
  constexpr std::string_view kMarker = "missing features:";
  std::vector<std::string> out;
  if (lower(notes_cell.substr(0, kMarker.size())) != kMarker) return out;
  const std::string_view body = notes_cell.substr(kMarker.size());
  std::string item;
  int depth = 0;
  const auto flush = [&] {
    std::string name = item.substr(0, item.find('('));
    const size_t b = name.find_first_not_of(' ');
    const size_t e = name.find_last_not_of(' ');
    name = b == std::string::npos ? "" : name.substr(b, e - b + 1);
    if (!name.empty() && !contains(lower(item), "in the runs named")) out.push_back(name);
    item.clear();
  };
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c == '(') ++depth;
    if (c == ')' && depth > 0) --depth;
    if (depth == 0 && c == ';') {
      flush();
      continue;
    }
    // A sentence ends the list: ". " outside parentheses.
    if (depth == 0 && c == '.' && (i + 1 == body.size() || body[i + 1] == ' ')) break;
    item += c;
  }
  flush();
  return out;
}

// Reads an MoE layer pattern ("every layer MoE (...)", "every 2 layers",
// "first 3 dense, then every layer"; text in parentheses is ignored) into
// Model::moe_layer_every and moe_first_dense. False when it is not one of
// these forms.
bool parse_moe_layer_pattern(std::string_view cell, int* every, int* first_dense) {
  std::string text = lower(cell);
  text = text.substr(0, text.find('('));
  *every = 1;
  *first_dense = 0;
  if (contains(text, "first")) {
    *first_dense = number_after(text, "first");
    if (*first_dense <= 0 || !contains(text, "dense")) return false;
  }
  if (contains(text, "every layer")) return true;
  if (contains(text, "every")) {
    *every = number_after(text, "every");
    return *every > 0;
  }
  return *first_dense > 0;
}

}  // namespace

std::string source_section_release(std::string_view cell) {
  constexpr std::string_view kSection = "section '";
  const size_t at = cell.find(kSection);
  if (at == std::string_view::npos) return "";
  const std::string_view rest = cell.substr(at + kSection.size());
  const std::string_view section = rest.substr(0, rest.find('\''));
  // Megatron-Bridge's performance-summary archive names its sections by
  // container ("26.04.01 NeMo Container"); other sections ("Training Speed
  // and Scalability") name no release.
  if (section.find(" NeMo Container") == std::string_view::npos ||
      release_version(section).empty()) {
    return "";
  }
  return std::string(section);
}

std::string source_id(std::string_view cell) {
  constexpr std::string_view kGithub = "github.com/";
  const size_t at = cell.find(kGithub);
  if (at != std::string_view::npos) {
    std::string_view rest = cell.substr(at + kGithub.size());
    const size_t slash = rest.find('/');
    if (slash != std::string_view::npos) {
      rest = rest.substr(slash + 1);
      const size_t end = rest.find_first_of("/ ");
      return std::string(rest.substr(0, end));
    }
  }
  // The NeMo-Framework documentation pages (docs.nvidia.com/nemo-framework).
  if (cell.find("docs.nvidia.com/nemo-framework") != std::string_view::npos) return "NeMo";
  return std::string(cell.substr(0, cell.find(' ')));
}

namespace {

// The columns of the Blackwell form (data/blackwell/published_runs.csv).
constexpr const char* kBlackwellColumns[] = {
    "source", "container", "system", "num_gpus", "model",        "seq",
    "precision", "tp",     "pp",     "cp",       "vp",           "ep",
    "etp",    "dp",        "micro_batch", "global_batch", "tokens_per_s_per_gpu"};

bool has_columns(std::string_view text, const std::vector<const char*>& names) {
  csv::CsvReader reader(text, "", 0);
  if (!reader.read_header().ok()) return false;
  const auto& h = reader.header();
  for (const char* n : names) {
    if (std::find(h.begin(), h.end(), n) == h.end()) return false;
  }
  return true;
}

}  // namespace

bool is_blackwell_runs_csv(std::string_view text) {
  return has_columns(text, std::vector<const char*>(std::begin(kBlackwellColumns),
                                                    std::end(kBlackwellColumns)));
}

bool is_runs_csv(std::string_view text) {
  return has_columns(text, {"name", "model", "measured_step_s", "fsdp"}) ||
         is_blackwell_runs_csv(text);
}

std::vector<int> release_version(std::string_view release) {
  // The first token that starts with two digits and a dot: "26.04.01",
  // "25.04.rc2".
  std::vector<int> out;
  size_t at = 0;
  while (at < release.size()) {
    const size_t end = std::min(release.find(' ', at), release.size());
    const std::string_view token = release.substr(at, end - at);
    if (token.size() >= 4 && std::isdigit(static_cast<unsigned char>(token[0])) &&
        std::isdigit(static_cast<unsigned char>(token[1])) && token[2] == '.') {
      size_t i = 0;
      while (i < token.size()) {
        const size_t dot = std::min(token.find('.', i), token.size());
        std::string part(token.substr(i, dot - i));
        if (starts_with(part, "rc")) {
          out.push_back(-1);  // a release candidate sorts before the release
          part = part.substr(2);
        }
        int v = 0;
        bool digits = !part.empty();
        for (char c : part) {
          if (!std::isdigit(static_cast<unsigned char>(c)) || v > 100000) {
            digits = false;
            break;
          }
          v = v * 10 + (c - '0');
        }
        if (!digits) return {};
        out.push_back(v);
        i = dot + 1;
      }
      // "26.04" is "26.04.0": after "26.04.rc2" ({26, 4, -1, 2}), before
      // "26.04.01".
      while (out.size() < 3) out.push_back(0);
      return out;
    }
    at = end + 1;
  }
  return out;
}

std::string blackwell_model_name(std::string_view cell) {
  std::string name = lower(cell.substr(0, cell.find('(')));
  while (!name.empty() && name.back() == ' ') name.pop_back();
  for (char& c : name) {
    if (c == '_' || c == ' ') c = '-';
  }
  // The sources' spellings of one model (NeMo's "LLAMA3-405B" is Llama 3.1
  // 405B: NeMo 2.0's llama31_405b recipe).
  static const std::map<std::string, std::string> kAliases = {
      {"llama3-405b", "llama3.1-405b"},      {"llama3.1-405b", "llama3.1-405b"},
      {"deepseekv3", "deepseek-v3"},         {"deepseek-v3", "deepseek-v3"},
      {"deepseekv4-flash", "deepseek-v4-flash"},
      {"nemotron-15b", "nemotron4-15b"},     {"nemotron-340b", "nemotron4-340b"},
      {"llama4-scout-llm", "llama4-scout"},  {"nemotron-3-nano", "nemotron3-nano"},
      {"nemotron-3-super", "nemotron3-super"}, {"nemotron-3-ultra", "nemotron3-ultra"},
      {"nemotron-3-5-lightning", "nemotron3.5-lightning"}};
  const auto it = kAliases.find(name);
  return it == kAliases.end() ? name : it->second;
}

Result<std::vector<RunRow>> read_blackwell_runs_rows_text(std::string_view text,
                                                          const std::string& source_name) {
  csv::CsvReader reader(text, source_name, kMaxRunsFileRows);
  LLMPLAN_RETURN_IF_ERROR(reader.read_header());
  enum { kSource, kContainer, kSystem, kGpus, kModel, kSeq, kPrec, kTp, kPp, kCp, kVp, kEp, kEtp,
         kDp, kMicro, kGlobal, kTps };
  LLMPLAN_ASSIGN_OR_RETURN(
      const std::vector<size_t> col,
      find_columns(reader,
                   std::vector<const char*>(std::begin(kBlackwellColumns),
                                            std::end(kBlackwellColumns)),
                   source_name));
  const size_t notes_col = optional_column(reader, "notes");
  std::vector<RunRow> out;
  while (true) {
    LLMPLAN_ASSIGN_OR_RETURN(bool more, reader.next());
    if (!more) break;
    RunRow r;
    r.line = reader.line();
    r.source = reader.cell(col[kSource]);
    r.release = reader.cell(col[kContainer]);
    r.system = reader.cell(col[kSystem]);
    const std::string notes = notes_col == kNoColumn ? "" : lower(reader.cell(notes_col));
    const std::string model_cell = reader.cell(col[kModel]);
    const std::string model_l = lower(model_cell);
    r.model = blackwell_model_name(model_cell);
    // Counts: a blank or malformed cell is a row the mapping cannot use
    // (listed), not an error of the file.
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
    // The row's name: model, system, release, precision, GPUs, line.
    std::string rel = r.release.substr(0, r.release.find(" ("));
    for (char& c : rel) c = c == ' ' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    r.name = r.model + (r.capacity_factor > 0 ? "-tokendrop" : "") + "_" + lower(r.system) + "_" +
             rel + "_" + (r.precision.empty() ? std::string("other") : r.precision) + "_" +
             std::to_string(r.gpus) + "gpu_l" + std::to_string(r.line);
    for (char& c : r.name) {
      if (c == ' ') c = '-';
    }
    out.push_back(std::move(r));
  }
  if (out.empty()) return Status::parse_error(source_name + ": no data rows after the header");
  return out;
}

Result<std::vector<ModelRow>> read_models_csv_text(std::string_view text,
                                                   const std::string& source_name) {
  csv::CsvReader reader(text, source_name, kMaxRunsFileRows);
  LLMPLAN_RETURN_IF_ERROR(reader.read_header());
  enum { kName, kLayers, kHidden, kHeads, kKv, kHeadDim, kFfn, kVocab, kAct, kTied, kPos, kBias,
         kExperts };
  LLMPLAN_ASSIGN_OR_RETURN(
      const std::vector<size_t> col,
      find_columns(reader,
                   {"model", "layers", "hidden", "heads", "kv_heads", "head_dim", "ffn", "vocab",
                    "activation", "tied_embeddings", "positions", "linear_bias", "moe_experts"},
                   source_name));
  const size_t top_k = optional_column(reader, "moe_top_k");
  const size_t expert_ffn = optional_column(reader, "moe_expert_ffn");
  const size_t shared = optional_column(reader, "moe_shared_experts");
  const size_t pattern = optional_column(reader, "moe_layer_pattern");
  const size_t window = optional_column(reader, "sliding_window");
  const size_t full_every = optional_column(reader, "full_attention_every");
  const size_t notes = optional_column(reader, "shape_notes");
  const size_t preset = optional_column(reader, "llmplan_preset");
  std::vector<ModelRow> out;
  while (true) {
    LLMPLAN_ASSIGN_OR_RETURN(bool more, reader.next());
    if (!more) break;
    ModelRow m;
    m.line = reader.line();
    m.name = reader.cell(col[kName]);
    if (m.name.empty()) return Status::parse_error(reader.where(col[kName]) + ": empty model name");
    for (const ModelRow& o : out) {
      if (o.name == m.name) {
        return Status::parse_error(reader.where(col[kName]) + ": model \"" + m.name +
                                   "\" already defined on line " + std::to_string(o.line));
      }
    }
    LLMPLAN_ASSIGN_OR_RETURN(m.layers, positive(reader, col[kLayers]));
    LLMPLAN_ASSIGN_OR_RETURN(m.hidden, positive(reader, col[kHidden]));
    LLMPLAN_ASSIGN_OR_RETURN(m.heads, positive(reader, col[kHeads]));
    LLMPLAN_ASSIGN_OR_RETURN(m.kv_heads, positive(reader, col[kKv]));
    LLMPLAN_ASSIGN_OR_RETURN(m.head_dim, positive(reader, col[kHeadDim]));
    LLMPLAN_ASSIGN_OR_RETURN(m.ffn, positive(reader, col[kFfn]));
    LLMPLAN_ASSIGN_OR_RETURN(m.vocab, positive(reader, col[kVocab]));
    LLMPLAN_ASSIGN_OR_RETURN(m.moe_experts, positive(reader, col[kExperts], /*zero_ok=*/true));
    m.activation = lower(reader.cell(col[kAct]));
    m.positions = lower(reader.cell(col[kPos]));
    LLMPLAN_ASSIGN_OR_RETURN(m.tied_embeddings, boolean(reader, col[kTied]));
    LLMPLAN_ASSIGN_OR_RETURN(m.linear_bias, boolean(reader, col[kBias]));
    const bool moe = m.moe_experts > 0;
    if (moe) {
      for (const auto& [c, name] : {std::pair{top_k, "moe_top_k"},
                                    std::pair{expert_ffn, "moe_expert_ffn"},
                                    std::pair{shared, "moe_shared_experts"},
                                    std::pair{pattern, "moe_layer_pattern"}}) {
        if (c == kNoColumn) {
          return Status::parse_error(reader.where(col[kExperts]) + ": model \"" + m.name +
                                     "\" has " + std::to_string(m.moe_experts) +
                                     " experts but the table has no column \"" + name + "\"");
        }
      }
    }
    if (top_k != kNoColumn) {
      LLMPLAN_ASSIGN_OR_RETURN(m.moe_top_k, positive(reader, top_k, /*zero_ok=*/true));
    }
    if (expert_ffn != kNoColumn) {
      LLMPLAN_ASSIGN_OR_RETURN(m.moe_expert_ffn, positive(reader, expert_ffn, /*zero_ok=*/true));
    }
    if (shared != kNoColumn) {
      LLMPLAN_ASSIGN_OR_RETURN(m.moe_shared_experts, positive(reader, shared, /*zero_ok=*/true));
    }
    if (pattern != kNoColumn) m.moe_layer_pattern = reader.cell(pattern);
    if (moe && (m.moe_top_k < 1 || m.moe_top_k > m.moe_experts)) {
      return Status::parse_error(reader.where(top_k) + ": must be from 1 to moe_experts (" +
                                 std::to_string(m.moe_experts) + "), got " + reader.cell(top_k));
    }
    if (!moe) {
      for (const auto& [c, v] : {std::pair{top_k, m.moe_top_k},
                                 std::pair{expert_ffn, m.moe_expert_ffn},
                                 std::pair{shared, m.moe_shared_experts}}) {
        if (v != 0) {
          return Status::parse_error(reader.where(c) + ": must be 0 for a model without experts "
                                     "(moe_experts 0), got " + reader.cell(c));
        }
      }
    }
    if (window != kNoColumn || full_every != kNoColumn) {
      if (window != kNoColumn) {
        LLMPLAN_ASSIGN_OR_RETURN(m.sliding_window, positive(reader, window, /*zero_ok=*/true));
      }
      if (full_every != kNoColumn) {
        LLMPLAN_ASSIGN_OR_RETURN(m.full_attention_every,
                                 positive(reader, full_every, /*zero_ok=*/true));
      }
    } else if (notes != kNoColumn) {
      window_from_notes(reader.cell(notes), &m.sliding_window, &m.full_attention_every);
    }
    if (notes != kNoColumn) m.missing_features = missing_from_notes(reader.cell(notes));
    if (notes != kNoColumn && m.activation == "swiglu") {
      m.activation_clamp = number_after(lower(reader.cell(notes)), "clamp");
    }
    if (preset != kNoColumn) m.preset = reader.cell(preset);
    out.push_back(std::move(m));
  }
  if (out.empty()) return Status::parse_error(source_name + ": no data rows after the header");
  return out;
}

Result<std::vector<RunRow>> read_runs_rows_text(std::string_view text,
                                                const std::string& source_name) {
  csv::CsvReader reader(text, source_name, kMaxRunsFileRows);
  LLMPLAN_RETURN_IF_ERROR(reader.read_header());
  enum { kName, kSource, kGpus, kPerNode, kModel, kSeq, kPrec, kTp, kPp, kVp, kCp, kDp, kEp,
         kFsdp, kMicro, kGlobal, kRecompute, kOverlaps, kStep };
  LLMPLAN_ASSIGN_OR_RETURN(
      const std::vector<size_t> col,
      find_columns(reader,
                   {"name", "source", "gpus", "gpus_per_node", "model", "seq", "precision", "tp",
                    "pp", "vp", "cp", "dp", "ep", "fsdp", "micro_batch", "global_batch",
                    "recompute", "overlaps", "measured_step_s"},
                   source_name));
  std::vector<RunRow> out;
  std::map<std::string, int> names;
  while (true) {
    LLMPLAN_ASSIGN_OR_RETURN(bool more, reader.next());
    if (!more) break;
    RunRow r;
    r.line = reader.line();
    r.name = reader.cell(col[kName]);
    if (r.name.empty()) return Status::parse_error(reader.where(col[kName]) + ": empty name");
    if (const auto [it, fresh] = names.emplace(r.name, r.line); !fresh) {
      return Status::parse_error(reader.where(col[kName]) + ": \"" + r.name +
                                 "\" already used on line " + std::to_string(it->second));
    }
    r.source = reader.cell(col[kSource]);
    r.gpus_per_node = reader.cell(col[kPerNode]);
    r.model = reader.cell(col[kModel]);
    r.precision = lower(reader.cell(col[kPrec]));
    r.fsdp = reader.cell(col[kFsdp]);
    r.recompute = lower(reader.cell(col[kRecompute]));
    r.overlaps = reader.cell(col[kOverlaps]);
    LLMPLAN_ASSIGN_OR_RETURN(r.gpus, positive(reader, col[kGpus]));
    LLMPLAN_ASSIGN_OR_RETURN(r.seq, positive(reader, col[kSeq]));
    LLMPLAN_ASSIGN_OR_RETURN(r.tp, positive(reader, col[kTp]));
    LLMPLAN_ASSIGN_OR_RETURN(r.pp, positive(reader, col[kPp]));
    LLMPLAN_ASSIGN_OR_RETURN(r.vp, positive(reader, col[kVp]));
    LLMPLAN_ASSIGN_OR_RETURN(r.cp, positive(reader, col[kCp]));
    LLMPLAN_ASSIGN_OR_RETURN(r.dp, positive(reader, col[kDp]));
    LLMPLAN_ASSIGN_OR_RETURN(r.ep, positive(reader, col[kEp]));
    LLMPLAN_ASSIGN_OR_RETURN(r.micro_batch, positive(reader, col[kMicro]));
    LLMPLAN_ASSIGN_OR_RETURN(r.global_batch, positive(reader, col[kGlobal]));
    LLMPLAN_ASSIGN_OR_RETURN(r.measured_step_s, reader.number(col[kStep]));
    if (!(r.measured_step_s > 0)) {
      return Status::parse_error(reader.where(col[kStep]) + ": must be positive, got " +
                                 reader.cell(col[kStep]));
    }
    if (static_cast<double>(r.tp) * r.pp * r.cp * r.dp != r.gpus) {
      return Status::parse_error(reader.where(col[kGpus]) + ": gpus " + std::to_string(r.gpus) +
                                 " != tp * pp * cp * dp = " + std::to_string(r.tp) + " * " +
                                 std::to_string(r.pp) + " * " + std::to_string(r.cp) + " * " +
                                 std::to_string(r.dp));
    }
    out.push_back(std::move(r));
  }
  if (out.empty()) return Status::parse_error(source_name + ": no data rows after the header");
  return out;
}

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

Result<PublishedRun> map_published_run(const RunRow& row, const std::vector<ModelRow>& models,
                                       const std::string& file, const presets::Catalog& catalog,
                                       const std::string& cluster) {
  const std::string where = file + ":" + std::to_string(row.line);
  // The Blackwell form: each row names its own cluster (RunRow::cluster).
  const bool blackwell = !row.cluster.empty() || !row.release.empty();
  const auto m = std::find_if(models.begin(), models.end(),
                              [&](const ModelRow& x) { return x.name == row.model; });
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
  // FP8 rows: "fp8-current" (Megatron-Bridge's current scaling); a row that
  // does not state its recipe ran Transformer Engine's default, delayed
  // scaling (NeMo 24.07, llm-foundry's amp_fp8).
  simulator::Fp8Recipe recipe = simulator::Fp8Recipe::kDelayed;
  if (starts_with(row.precision, "fp8")) {
    precision = simulator::Precision::kFp8;
    if (starts_with(row.precision, "fp8-current")) recipe = simulator::Fp8Recipe::kCurrent;
    if (starts_with(row.precision, "fp8-mx")) recipe = simulator::Fp8Recipe::kMxfp8;
  } else if (starts_with(row.precision, "nvfp4")) {
    precision = simulator::Precision::kNvfp4;
  } else if (starts_with(row.precision, "fp16")) {
    precision = simulator::Precision::kFp16;
  } else if (row.precision == "nvfp4") {
    // Through the plan's own precision parser: expressible as soon as the
    // simulator has the precision.
    simulator::Plan probe;
    boost::json::object o;
    o["precision"] = "nvfp4";
    if (simulator::apply_plan_json(o, "precision", &probe).ok()) {
      precision = probe.precision;
    } else {
      out.missing.push_back("precision nvfp4");
    }
  } else if (!starts_with(row.precision, "bf16") && !(blackwell && row.precision.empty())) {
    // (A Blackwell-form row without a precision already lists why.)
    out.missing.push_back("precision " + row.precision.substr(0, row.precision.find(' ')));
  }
  for (const std::string& f : m->missing_features) out.missing.push_back(f);
  const bool moe = m->moe_experts > 0;
  if (row.ep > 1 && !moe) out.missing.push_back("ep > 1 on a dense model");
  if (!m->preset.empty()) {
    // The preset expresses the shape (ModelRow::preset).
    LLMPLAN_ASSIGN_OR_RETURN(simulator::Model preset, preset_model(*m, catalog));
    if (!out.missing.empty()) return out;
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
      return out;
    }
  } else {
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
    if (!out.missing.empty()) return out;

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
      return out;
    }
  }

  simulator::Plan& plan = out.config.plan;
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
  plan.precision = precision;
  plan.fp8_recipe = recipe;
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
    if (out.source == "Megatron-Bridge" &&
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
  if (out.source == "NeMo" && starts_with(fsdp, "unstated") && starts_with(ov, "unstated")) {
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
  if (out.source == "Megatron-Bridge" && plan.zero_stage == 1 && starts_with(ov, "unstated")) {
    plan.overlap_grad_reduce = true;
    plan.overlap_param_gather = true;
  }
  // Llama-style models (SwiGLU) train without dropout in NeMo's and
  // Megatron-Bridge's recipes (hidden and attention dropout 0), and so do
  // the Nemotron models (squared ReLU): NeMo-Framework-Launcher
  // conf/training/nemotron/nemotron_8b.yaml and nemotron_340b.yaml set
  // hidden_dropout, attention_dropout and ffn_dropout to 0.0.
  if ((out.source == "NeMo" || out.source == "Megatron-Bridge" || blackwell) &&
      (m->activation == "swiglu" || m->activation == "squared-relu")) {
    plan.dropout = false;
  }
  // llm-foundry's MPT recipes train without dropout (resid/emb/attn pdrop 0)
  // and with flash-attn's fused cross-entropy (loss_fn fused_crossentropy):
  // no dropout masks, and the logits' gradient computed in place.
  if (out.source == "llm-foundry") {
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
  if (out.source == "Megatron-Bridge") plan.fused_cross_entropy = true;
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
  if ((out.source == "Megatron-Bridge" || blackwell) && starts_with(m->name, "gpt-oss")) {
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

Result<std::vector<PublishedRun>> read_runs_csv_text(std::string_view runs_text,
                                                     const std::string& runs_name,
                                                     std::string_view models_text,
                                                     const std::string& models_name,
                                                     const presets::Catalog& catalog) {
  LLMPLAN_ASSIGN_OR_RETURN(std::vector<ModelRow> models,
                           read_models_csv_text(models_text, models_name));
  std::vector<RunRow> rows;
  if (is_blackwell_runs_csv(runs_text)) {
    LLMPLAN_ASSIGN_OR_RETURN(rows, read_blackwell_runs_rows_text(runs_text, runs_name));
  } else {
    LLMPLAN_ASSIGN_OR_RETURN(rows, read_runs_rows_text(runs_text, runs_name));
  }
  std::vector<PublishedRun> out;
  for (const RunRow& r : rows) {
    LLMPLAN_ASSIGN_OR_RETURN(PublishedRun p, map_published_run(r, models, runs_name, catalog));
    out.push_back(std::move(p));
  }
  return out;
}

Result<std::vector<PublishedRun>> read_runs_csv_file(const std::string& path,
                                                     const std::string& models_path,
                                                     const presets::Catalog& catalog) {
  std::string models = models_path;
  if (models.empty()) {
    const size_t slash = path.find_last_of('/');
    models = (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) + "models.csv";
  }
  LLMPLAN_ASSIGN_OR_RETURN(std::string runs_text, read_input_file(path));
  Result<std::string> models_text = read_input_file(models);
  if (!models_text.ok()) {
    return models_text.status().with_prefix(path + ": its models table (--models)");
  }
  return read_runs_csv_text(runs_text, path, *models_text, models, catalog);
}

Result<std::vector<PublishedRun>> read_runs_json_text(std::string_view text,
                                                      const std::string& source_name,
                                                      const presets::Catalog& catalog) {
  LLMPLAN_ASSIGN_OR_RETURN(boost::json::value doc, json::parse(text, source_name));
  if (!doc.is_array()) {
    return Status::invalid_argument(source_name + ": expected a JSON array of runs");
  }
  const boost::json::array& a = doc.as_array();
  if (a.empty()) return Status::invalid_argument(source_name + ": no runs in the array");
  if (a.size() > kMaxRunsFileRows) {
    return Status::invalid_argument(source_name + ": more than " +
                                    std::to_string(kMaxRunsFileRows) + " runs");
  }
  std::vector<PublishedRun> out;
  std::map<std::string, size_t> names;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string path = source_name + ": [" + std::to_string(i) + "]";
    if (!a[i].is_object()) return Status::invalid_argument(path + ": expected an object");
    const boost::json::object& o = a[i].as_object();
    boost::json::object config;
    PublishedRun r;
    r.line = static_cast<int>(i) + 1;
    r.file = source_name;
    bool has_time = false;
    for (const auto& [key, value] : o) {
      const std::string k(key);
      if (k == "name" || k == "source") {
        if (!value.is_string()) return Status::invalid_argument(path + "." + k + ": expected a string");
        (k == "name" ? r.name : r.source) = std::string(value.as_string());
      } else if (k == "model" || k == "plan") {
        config[k] = value;
      } else if (k == "cluster") {
        if (value.is_string()) {
          config[k] = boost::json::object{{"preset", value}};
        } else {
          config[k] = value;
        }
      } else if (k == "measured_step_s") {
        if (!value.is_number() || !(value.to_number<double>() > 0)) {
          return Status::invalid_argument(path + ".measured_step_s: expected a positive number");
        }
        r.measured_step_s = value.to_number<double>();
        has_time = true;
      } else {
        return Status::invalid_argument(path + ": unknown key \"" + k +
                                        "\" (expected name, source, model, plan, cluster, "
                                        "measured_step_s)");
      }
    }
    for (const char* k : {"model", "plan", "cluster"}) {
      if (!config.contains(k)) return Status::invalid_argument(path + ": missing \"" + k + "\"");
    }
    if (r.name.empty()) return Status::invalid_argument(path + ": missing \"name\"");
    if (!has_time) return Status::invalid_argument(path + ": missing \"measured_step_s\"");
    if (const auto [it, fresh] = names.emplace(r.name, i); !fresh) {
      return Status::invalid_argument(path + ".name: \"" + r.name + "\" already used by [" +
                                      std::to_string(it->second) + "]");
    }
    r.source = r.source.empty() ? source_name : source_id(r.source);
    LLMPLAN_ASSIGN_OR_RETURN(r.config, presets::load_sim_config_text(boost::json::serialize(config),
                                                                     path, catalog));
    r.model = r.config.model.name;
    out.push_back(std::move(r));
  }
  return out;
}

Result<std::vector<PublishedRun>> read_runs_file(const std::string& path,
                                                 const std::string& models_path,
                                                 const presets::Catalog& catalog) {
  LLMPLAN_ASSIGN_OR_RETURN(std::string text, read_input_file(path));
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '[') {
    return read_runs_json_text(text, path, catalog);
  }
  if (!is_runs_csv(text)) {
    return Status::invalid_argument(path +
                                    ": not a runs file (expected a JSON array or the header of "
                                    "data/h100/published_runs.csv or "
                                    "data/blackwell/published_runs.csv)");
  }
  return read_runs_csv_file(path, models_path, catalog);
}

Result<bool> is_runs_file(const std::string& path) {
  LLMPLAN_ASSIGN_OR_RETURN(std::string text, read_input_file(path));
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '[') return true;
  return is_runs_csv(text);
}

std::vector<int> assign_folds(const std::vector<std::string>& keys, int k) {
  std::map<std::string, int> fold_of;
  std::vector<int> out;
  out.reserve(keys.size());
  for (const std::string& key : keys) {
    const auto [it, fresh] = fold_of.try_emplace(key, static_cast<int>(fold_of.size()) % k);
    out.push_back(it->second);
  }
  return out;
}

}  // namespace llmplan::planner

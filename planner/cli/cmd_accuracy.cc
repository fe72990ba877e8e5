// `llmplan validate` and `llmplan calibrate`: the simulator against measured
// iteration times (planner/accuracy/accuracy.h).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>

#include "planner/accuracy/accuracy.h"
#include "planner/accuracy/accuracy_json.h"
#include "planner/accuracy/held_out.h"
#include "planner/accuracy/runs_report.h"
#include "planner/cli/command.h"
#include "planner/cli/progress.h"
#include "planner/cli/sim_inputs.h"
#include "reports/format.h"
#include "reports/svg_plot.h"
#include "reports/table.h"

namespace llmplan::planner {
namespace {

// Most cross-validation folds: each fold is a whole calibration (about 26 s
// on the vTrain single-node file), so 20 folds take about ten minutes.
constexpr int kMaxFolds = 20;

struct AccuracyOptions {
  std::vector<std::string> files;
  std::string format = "text";
  std::string gpu, cluster, constants, output, evaluate;
  std::string out_dir;  // validate --out
  std::string models;   // runs files: the models table (default: models.csv beside the file)
  int folds = 0;        // validate: -1 = the default (5 for runs files)
  int max_iterations = CalibrationOptions().max_iterations;
  int starts = CalibrationOptions().starts;
  bool progress = false;
  bool moe_only = false;  // calibrate: hold the constants in effect, fit only the MoE stage
  bool hybrid_only = false;  // calibrate: hold the constants in effect, fit only ssd_scan_efficiency
  std::string pool_gpu;   // calibrate: the pooled restricted fit's other GPU (#26)
};

// Prints a line to stdout at once (calibrate streams its results); a failed
// write is caught by main's final check of stdout.
void stream_line(const std::string& text) {
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
}

std::string pct(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f %%", 100.0 * fraction);
  return buf;
}

// Default folds of validate on a runs file.
constexpr int kDefaultRunsFolds = 5;

// Whether the command reads runs files (all files must agree).
Result<bool> reads_runs_files(const AccuracyOptions& o) {
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

// The cases of runs files: every row in *runs, the expressible ones as
// cases, with the GPU / cluster / constants the flags choose.
Result<std::vector<AccuracyCase>> load_runs_cases(const AccuracyOptions& o,
                                                  const GlobalOptions& global,
                                                  std::vector<PublishedRun>* runs,
                                                  std::vector<std::string>* notes,
                                                  std::string* gpu_name) {
  LLMPLAN_ASSIGN_OR_RETURN(presets::Catalog catalog, load_catalog(global));
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
    LLMPLAN_RETURN_IF_ERROR(catalog.gpu(o.gpu).status());
    const size_t before = cases.size();
    std::erase_if(cases,
                  [&](const AccuracyCase& c) { return c.config.cluster.gpu.name != o.gpu; });
    // The runs listed beside the cases (the reports walk both in step): the
    // rows of other GPUs go too, expressible or not (a row whose cluster is
    // not a preset stays, listed with its reason).
    std::erase_if(*runs, [&](const PublishedRun& r) {
      if (r.missing.empty()) return r.config.cluster.gpu.name != o.gpu;
      const Result<simulator::Cluster> c = catalog.cluster(r.cluster);
      return c.ok() && c->gpu.name != o.gpu;
    });
    if (cases.empty()) {
      return Status::invalid_argument("--gpu: no expressible row of " + o.files.front() +
                                      " ran on GPU " + o.gpu);
    }
    notes->push_back("--gpu " + o.gpu + ": the " + std::to_string(cases.size()) +
                     " expressible rows on " + o.gpu + "; " +
                     std::to_string(before - cases.size()) +
                     " expressible rows of other GPUs ignored");
  } else if (!o.cluster.empty() || !o.gpu.empty()) {
    for (AccuracyCase& c : cases) {
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
  }
  if (!o.constants.empty()) {
    AccuracyConstants k = constants_of(cases.front());
    LLMPLAN_RETURN_IF_ERROR(read_constants_file(o.constants, &k));
    apply_constants(k, &cases);
    notes->push_back("constants from " + o.constants);
  }
  *gpu_name = cases.front().config.cluster.gpu.name;
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
  return cases;
}

// The cases of every file, with the GPU and constants the flags choose.
Result<std::vector<AccuracyCase>> load_cases(const AccuracyOptions& o, const GlobalOptions& global,
                                             std::vector<std::string>* notes,
                                             std::string* gpu_name) {
  LLMPLAN_ASSIGN_OR_RETURN(presets::Catalog catalog, load_catalog(global));
  std::unique_ptr<simulator::GpuSpec> gpu;
  if (!o.gpu.empty() || !o.cluster.empty()) {
    LLMPLAN_ASSIGN_OR_RETURN(simulator::Cluster c,
                             resolve_cluster(catalog, o.cluster, o.gpu, 0, "dgx-a100-80gb"));
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
  if (!o.constants.empty()) {
    AccuracyConstants k = constants_of(all.front());
    LLMPLAN_RETURN_IF_ERROR(read_constants_file(o.constants, &k));
    apply_constants(k, &all);
    notes->push_back("constants from " + o.constants);
  }
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

std::vector<double> measured_of(const std::vector<AccuracyCase>& cases) {
  std::vector<double> m;
  for (const AccuracyCase& c : cases) m.push_back(c.run.iteration_time_s);
  return m;
}

reports::Table group_table(const std::vector<AccuracyCase>& cases,
                           const std::vector<double>& predicted, Grouping g) {
  reports::Table t({to_string(g), "rows", "MAPE", "median", "max", "bias"});
  for (const GroupError& e : group_errors(cases, predicted, g)) {
    t.add_row({e.key, std::to_string(e.error.rows), pct(e.error.mape), pct(e.error.median_ape),
               pct(e.error.max_ape), pct(e.error.mean_signed)});
  }
  return t;
}

constexpr Grouping kGroupings[] = {Grouping::kGpus,  Grouping::kModel,  Grouping::kPlan,
                                   Grouping::kMicroBatch, Grouping::kHidden, Grouping::kTensor,
                                   Grouping::kData,  Grouping::kPipeline};

// The file name of validate's plot, written beside report.md by --out.
constexpr const char* kValidatePlot = "predicted_vs_measured.svg";

Result<std::string> validate_csv(const std::vector<AccuracyCase>& cases,
                                 const std::vector<double>& pred) {
  reports::Table t({"line", "gpus", "global_batch", "micro_batch", "hidden", "heads", "layers",
                    "seq", "t", "d", "p", "measured_ms", "predicted_ms", "ape_percent"});
  for (size_t i = 0; i < cases.size(); ++i) {
    const MeasuredRun& r = cases[i].run;
    char m[32], p[32], e[32];
    std::snprintf(m, sizeof m, "%.3f", r.iteration_time_s * 1e3);
    std::snprintf(p, sizeof p, "%.3f", pred[i] * 1e3);
    std::snprintf(e, sizeof e, "%.3f",
                  100 * std::abs(pred[i] - r.iteration_time_s) / r.iteration_time_s);
    t.add_row({std::to_string(r.line), std::to_string(r.num_gpus), std::to_string(r.global_batch),
               std::to_string(r.micro_batch), std::to_string(r.hidden_size),
               std::to_string(r.num_heads), std::to_string(r.num_layers),
               std::to_string(r.seq_length), std::to_string(r.tensor), std::to_string(r.data),
               std::to_string(r.pipeline), m, p, e});
  }
  return t.csv();
}

Result<std::string> validate_plot_svg(const std::vector<double>& meas,
                                      const std::vector<double>& pred) {
  reports::Plot plot;
  plot.title = "Predicted vs measured iteration time";
  plot.x = {"measured (s)", true};
  plot.y = {"predicted (s)", true};
  plot.series.push_back({"runs", reports::SeriesKind::kScatter, meas, pred, "", false});
  plot.references.push_back({reports::ReferenceKind::kIdentity, 0, "y = x"});
  return reports::render_svg(plot);
}

// The text or Markdown report. Markdown links the plot when `plot_link` is
// set (the file beside it), else says that --out writes it.
std::string validate_report(const std::string& source, const std::string& gpu_name,
                            const std::vector<AccuracyCase>& cases,
                            const std::vector<double>& pred, const std::vector<std::string>& notes,
                            bool md, const std::string& plot_link) {
  const ErrorSummary s = summarise(pred, measured_of(cases));
  std::string out = md ? "# Validation: " + source + "\n\n" : "validation: " + source + "\n";
  const std::string item = md ? "- " : "  ";
  out += item + "GPU: " + gpu_name + "\n";
  out += item + "rows: " + std::to_string(s.rows) + "\n";
  out += item + "MAPE: " + pct(s.mape) + "\n";
  out += item + "median APE: " + pct(s.median_ape) + "\n";
  out += item + "max APE: " + pct(s.max_ape) + "\n";
  out += item + "mean signed error: " + pct(s.mean_signed) + "\n\n";
  if (md) {
    out += plot_link.empty()
               ? std::string("The plot of predicted vs measured times, ") + kValidatePlot +
                     ", is written beside report.md by `llmplan validate ... --out DIR`.\n\n"
               : "![Predicted vs measured iteration time](" + plot_link + ")\n\n";
  }
  for (Grouping g : kGroupings) {
    const reports::Table t = group_table(cases, pred, g);
    out += md ? "## Error by " + std::string(to_string(g)) + "\n\n" + t.markdown() + "\n"
              : "error by " + std::string(to_string(g)) + ":\n" + t.text() + "\n";
  }
  for (const std::string& n : notes) out += (md ? "- note: " : "note: ") + n + "\n";
  return out;
}

// Calibration settings for the cases (network only with multi-node rows,
// flash attention only where it is used), with progress on stderr.
CalibrationOptions calibration_options(const AccuracyOptions& o,
                                       const std::vector<AccuracyCase>& cases,
                                       const std::shared_ptr<Progress>& progress,
                                       const std::shared_ptr<std::string>& stage) {
  CalibrationOptions copt;
  copt.max_iterations = o.max_iterations;
  copt.starts = o.starts;
  if (progress->enabled()) {
    copt.on_progress = [progress, stage](const CalibrationProgress& p) {
      char buf[160];
      if (p.stage == CalibrationProgress::Stage::kScreen) {
        std::snprintf(buf, sizeof buf, "screening starting point %d of %d, best cost %.6g", p.step,
                      p.steps, p.cost);
      } else {
        std::snprintf(buf, sizeof buf, "start %d of %d, iteration %d, cost %.6g", p.step, p.steps,
                      p.iteration, p.cost);
      }
      progress->message(*stage + buf);
    };
  }
  for (const AccuracyCase& c : cases) {
    copt.fit_network |= c.run.num_gpus > c.config.cluster.gpus_per_node;
    copt.fit_flash_attention |= c.config.plan.flash_attention;
  }
  return copt;
}

// The restricted dense fit (#26, planner/accuracy/restricted_fit.h): runs
// files whose rows state their release (the Blackwell form) hold what their
// few dense rows cannot determine at the h100-sxm preset's calibration
// scaled by datasheet ratios; calibrate() applies it only where the rows are
// too few for the full fit.
Status set_prior_reference(const GlobalOptions& global, const std::vector<AccuracyCase>& cases,
                           CalibrationOptions* copt) {
  const bool releases = std::any_of(cases.begin(), cases.end(), [](const AccuracyCase& c) {
    return !c.release.empty() && c.config.cluster.gpu.name != "h100-sxm";
  });
  if (!releases) return Status();
  LLMPLAN_ASSIGN_OR_RETURN(presets::Catalog catalog, load_catalog(global));
  LLMPLAN_ASSIGN_OR_RETURN(simulator::GpuSpec h100, catalog.gpu("h100-sxm"));
  copt->prior_reference = std::make_shared<const simulator::GpuSpec>(std::move(h100));
  return Status();
}

// The fold of each case: i mod k for vTrain's CSV (as always), by
// configuration for runs files (assign_folds).
std::vector<int> folds_of(const std::vector<AccuracyCase>& cases, int k, bool runs) {
  std::vector<std::string> keys;
  for (size_t i = 0; i < cases.size(); ++i) {
    keys.push_back(runs ? configuration_key(cases[i]) : std::to_string(i));
  }
  return assign_folds(keys, k);
}

Status run_validate_runs(const AccuracyOptions& o, const GlobalOptions& global) {
  RunsValidation v;
  LLMPLAN_ASSIGN_OR_RETURN(v.cases, load_runs_cases(o, global, &v.runs, &v.notes, &v.gpu));
  if (fits_latest_release(v.cases)) {
    v.latest = latest_release_mask(v.cases);
    std::vector<std::string> gpus;
    for (const AccuracyCase& c : v.cases) {
      if (std::find(gpus.begin(), gpus.end(), c.config.cluster.gpu.name) == gpus.end()) {
        gpus.push_back(c.config.cluster.gpu.name);
      }
    }
    v.gpu.clear();
    for (const std::string& g : gpus) v.gpu += (v.gpu.empty() ? "" : ", ") + g;
  }
  for (const std::string& f : o.files) v.source += (v.source.empty() ? "" : " ") + f;
  LLMPLAN_ASSIGN_OR_RETURN(v.predicted, predict_iteration_times(v.cases, nullptr, &v.fits, &v.peak_memory_bytes,
                                                                   &v.memory_capacity_bytes));
  const int folds = o.folds < 0 ? kDefaultRunsFolds : o.folds;
  if (folds > static_cast<int>(v.cases.size())) {
    return Status::invalid_argument("--folds: " + std::to_string(folds) + " folds for " +
                                    std::to_string(v.cases.size()) +
                                    " expressible rows; give at most " +
                                    std::to_string(v.cases.size()) + " (or 0: none)");
  }
  if (folds > 1) {
    auto progress = std::make_shared<Progress>("validate", "", o.progress);
    auto stage = std::make_shared<std::string>();
    CalibrationOptions copt = calibration_options(o, v.cases, progress, stage);
    LLMPLAN_RETURN_IF_ERROR(set_prior_reference(global, v.cases, &copt));
    const std::vector<int> fold = folds_of(v.cases, folds, true);
    *stage = "fold 1 of " + std::to_string(folds) + ": ";
    if (!o.constants.empty()) {
      v.notes.push_back("held-out folds calibrate from the constants in effect (" + o.constants +
                        ")");
    }
    LLMPLAN_ASSIGN_OR_RETURN(
        v.held_out,
        cross_validate(v.cases, fold, folds, constants_of(v.cases.front()), copt,
                       [&](int f, const CalibrationResult&, const std::vector<double>&,
                           const std::vector<double>&) {
                         *stage = "fold " + std::to_string(f + 2) + " of " +
                                  std::to_string(folds) + ": ";
                       },
                       v.latest.empty() ? nullptr : &v.latest));
    v.notes.push_back(std::to_string(folds) +
                      "-fold held-out: each fold calibrates (llmplan calibrate's fit, --starts " +
                      std::to_string(o.starts) + ", --max-iterations " +
                      std::to_string(o.max_iterations) +
                      ") on the dense rows of the other folds (mixture-of-experts rows are "
                      "predicted, never fitted); rows of one configuration share a fold" +
                      (v.latest.empty() ? std::string()
                                        : "; per GPU kind, fitted on the latest release of "
                                          "each (system, model, precision) only"));
    if (!v.latest.empty()) {
      std::vector<std::string> releases;
      const std::vector<int> by_release = release_folds(v.cases, &releases);
      if (releases.size() > 1) {
        *stage = "leave-one-release-out: ";
        LLMPLAN_ASSIGN_OR_RETURN(
            v.by_release.leave_one_out,
            cross_validate(v.cases, by_release, static_cast<int>(releases.size()),
                           constants_of(v.cases.front()), copt, nullptr, nullptr,
                           /*lenient=*/true));
        v.by_release.releases = releases;
        v.notes.push_back(
            "leave-one-release-out: each release's rows predicted by a fit (per GPU kind) on "
            "the dense rows of every other release");
      }
    }
  }
  const bool out_dir = !o.out_dir.empty();
  if (out_dir) {
    LLMPLAN_ASSIGN_OR_RETURN(const std::string svg,
                             validate_plot_svg(measured_of(v.cases), v.predicted));
    LLMPLAN_ASSIGN_OR_RETURN(const std::string json_text, runs_validation_json(v));
    LLMPLAN_ASSIGN_OR_RETURN(const std::string csv, runs_validation_csv(v));
    LLMPLAN_ASSIGN_OR_RETURN(OutputDir out, OutputDir::open(o.out_dir, "--out"));
    LLMPLAN_RETURN_IF_ERROR(out.write("report.md", runs_validation_report(v, true)));
    LLMPLAN_RETURN_IF_ERROR(out.write(kValidatePlot, svg));
    LLMPLAN_RETURN_IF_ERROR(out.write("validation.csv", csv));
    LLMPLAN_RETURN_IF_ERROR(out.write("validation.json", json_text));
    out.keep();
  }
  std::string out;
  if (o.format == "json") {
    LLMPLAN_ASSIGN_OR_RETURN(out, runs_validation_json(v));
  } else if (o.format == "csv") {
    LLMPLAN_ASSIGN_OR_RETURN(out, runs_validation_csv(v));
  } else {
    out = runs_validation_report(v, o.format == "md");
  }
  return write_stdout(out);
}

Status run_validate(const AccuracyOptions& o, const GlobalOptions& global) {
  LLMPLAN_ASSIGN_OR_RETURN(const bool runs, reads_runs_files(o));
  if (runs) return run_validate_runs(o, global);
  if (o.folds > 0) {
    return Status::invalid_argument("--folds: validate cross-validates runs files only; use "
                                    "llmplan calibrate --folds for vTrain's CSV");
  }
  std::vector<std::string> notes;
  std::string gpu_name;
  LLMPLAN_ASSIGN_OR_RETURN(std::vector<AccuracyCase> cases, load_cases(o, global, &notes, &gpu_name));
  LLMPLAN_ASSIGN_OR_RETURN(std::vector<double> pred, predict_iteration_times(cases, nullptr));
  const std::string source = o.files.front();
  const bool out_dir = !o.out_dir.empty();
  if (out_dir) {
    LLMPLAN_ASSIGN_OR_RETURN(const std::string svg, validate_plot_svg(measured_of(cases), pred));
    LLMPLAN_ASSIGN_OR_RETURN(const std::string json_text,
                             validation_to_json(source, cases, pred, notes));
    LLMPLAN_ASSIGN_OR_RETURN(const std::string csv, validate_csv(cases, pred));
    LLMPLAN_ASSIGN_OR_RETURN(OutputDir out, OutputDir::open(o.out_dir, "--out"));
    LLMPLAN_RETURN_IF_ERROR(out.write(
        "report.md", validate_report(source, gpu_name, cases, pred, notes, true, kValidatePlot)));
    LLMPLAN_RETURN_IF_ERROR(out.write(kValidatePlot, svg));
    LLMPLAN_RETURN_IF_ERROR(out.write("validation.csv", csv));
    LLMPLAN_RETURN_IF_ERROR(out.write("validation.json", json_text));
    out.keep();
  }
  std::string out;
  if (o.format == "json") {
    LLMPLAN_ASSIGN_OR_RETURN(out, validation_to_json(source, cases, pred, notes));
  } else if (o.format == "csv") {
    LLMPLAN_ASSIGN_OR_RETURN(out, validate_csv(cases, pred));
  } else {
    out = validate_report(source, gpu_name, cases, pred, notes, o.format == "md",
                          out_dir ? o.out_dir + "/" + kValidatePlot : "");
  }
  return write_stdout(out);
}

// MAPE of `rows` of `cases` predicted with `constants` ("n/a" for none).
Result<std::string> moe_mape(const std::vector<AccuracyCase>& cases, const std::vector<size_t>& rows,
                             const AccuracyConstants& constants) {
  if (rows.empty()) return std::string("n/a");
  std::vector<AccuracyCase> trial;
  for (size_t i : rows) trial.push_back(cases[i]);
  apply_constants(constants, &trial);
  LLMPLAN_ASSIGN_OR_RETURN(const std::vector<double> p, predict_iteration_times(trial, nullptr));
  return pct(summarise(p, measured_of(trial)).mape);
}

// The rows of `cases` that `keep` selects (*rows) and, of those, the rows
// of the latest release (*fit_rows; every kept row when `latest` is empty).
template <typename Keep>
void stage_rows(const std::vector<AccuracyCase>& cases, const std::vector<bool>& latest,
                Keep keep, std::vector<size_t>* rows, std::vector<size_t>* fit_rows) {
  for (size_t i = 0; i < cases.size(); ++i) {
    if (!keep(cases[i])) continue;
    rows->push_back(i);
    if (latest.empty() || latest[i]) fit_rows->push_back(i);
  }
}

// Copies of cases[rows[0]], cases[rows[1]], ...
std::vector<AccuracyCase> cases_at(const std::vector<AccuracyCase>& cases,
                                   const std::vector<size_t>& rows) {
  std::vector<AccuracyCase> out;
  out.reserve(rows.size());
  for (size_t i : rows) out.push_back(cases[i]);
  return out;
}

// The hybrid stage of calibrate (#27): ssd_scan_efficiency (calibrate_ssd)
// fitted on the rows of models with Mamba layers of the latest release of
// each system, model and precision (every such row when `latest` is empty),
// every other constant held; then held out by model (each model's latest
// rows predicted by a fit on the other models' latest rows). Sets
// ssd_scan_efficiency of `*constants`; `report` gets {"rows",
// "ssd_scan_efficiency", "in_sample_mape", "all_rows_mape",
// "held_out_by_model": {model: {"rows", "mape", "ssd_scan_efficiency"}},
// "leave_one_model_out_mape"} (fractions). Nothing when no row has Mamba
// layers.
Status fit_ssd_constant(const std::vector<AccuracyCase>& cases, const std::vector<bool>& latest,
                        AccuracyConstants* constants, boost::json::object* report) {
  std::vector<size_t> hybrid, fit_rows;
  stage_rows(cases, latest, has_mamba_layers, &hybrid, &fit_rows);
  if (fit_rows.empty()) return Status();
  const auto pick = [&](const std::vector<size_t>& rows) { return cases_at(cases, rows); };
  LLMPLAN_ASSIGN_OR_RETURN(const SsdCalibrationResult all, calibrate_ssd(pick(fit_rows), *constants));
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "hybrid constant fitted on %zu rows with Mamba layers%s (other constants held): "
                "ssd_scan_efficiency %.4g; in-sample MAPE %s\n",
                fit_rows.size(), latest.empty() ? "" : " of the latest release",
                all.constants.roofline.ssd_scan_efficiency, pct(all.in_sample_mape).c_str());
  stream_line(buf);
  for (const std::string& b : all.at_bound) stream_line("note: " + b + "\n");
  (*report)["rows"] = fit_rows.size();
  (*report)["ssd_scan_efficiency"] = all.constants.roofline.ssd_scan_efficiency;
  (*report)["in_sample_mape"] = all.in_sample_mape;
  LLMPLAN_ASSIGN_OR_RETURN(const std::string all_rows, moe_mape(cases, hybrid, all.constants));
  {
    std::vector<AccuracyCase> t = pick(hybrid);
    apply_constants(all.constants, &t);
    LLMPLAN_ASSIGN_OR_RETURN(const std::vector<double> p, predict_iteration_times(t, nullptr));
    (*report)["all_rows_mape"] = summarise(p, measured_of(t)).mape;
  }
  stream_line("hybrid MAPE with this constant over all " + std::to_string(hybrid.size()) +
              " rows with Mamba layers (older releases included): " + all_rows + "\n");
  std::vector<std::string> models;
  for (size_t i : fit_rows) {
    const std::string& m = cases[i].config.model.name;
    if (std::find(models.begin(), models.end(), m) == models.end()) models.push_back(m);
  }
  boost::json::object by_model;
  std::vector<double> held_p, held_m;
  for (const std::string& m : models) {
    std::vector<size_t> train, test;
    for (size_t i : fit_rows) (cases[i].config.model.name == m ? test : train).push_back(i);
    if (train.empty()) continue;
    LLMPLAN_ASSIGN_OR_RETURN(const SsdCalibrationResult f, calibrate_ssd(pick(train), *constants));
    std::vector<AccuracyCase> t = pick(test);
    apply_constants(f.constants, &t);
    LLMPLAN_ASSIGN_OR_RETURN(const std::vector<double> p, predict_iteration_times(t, nullptr));
    const std::vector<double> meas = measured_of(t);
    held_p.insert(held_p.end(), p.begin(), p.end());
    held_m.insert(held_m.end(), meas.begin(), meas.end());
    by_model[m] = {{"rows", test.size()},
                   {"mape", summarise(p, meas).mape},
                   {"ssd_scan_efficiency", f.constants.roofline.ssd_scan_efficiency}};
    std::snprintf(buf, sizeof buf,
                  "hybrid leave-one-model-out: %s: MAPE %s (%zu rows predicted by "
                  "ssd_scan_efficiency %.4g fitted on the other models)\n",
                  m.c_str(), pct(summarise(p, meas).mape).c_str(), test.size(),
                  f.constants.roofline.ssd_scan_efficiency);
    stream_line(buf);
  }
  (*report)["held_out_by_model"] = std::move(by_model);
  if (!held_p.empty()) {
    (*report)["leave_one_model_out_mape"] = summarise(held_p, held_m).mape;
    stream_line("hybrid leave-one-model-out MAPE: " + pct(summarise(held_p, held_m).mape) + " (" +
                std::to_string(held_p.size()) + " rows)\n");
  }
  constants->roofline.ssd_scan_efficiency = all.constants.roofline.ssd_scan_efficiency;
  return Status();
}

// The mixture-of-experts stage of calibrate (#27): the MoE constants
// (calibrate_moe) fitted on the MoE rows of the latest release of each
// system, model and precision (every MoE row when `latest` is empty), with
// the dense fit's constants held; then held out by model (each model's
// latest rows predicted by a fit on the other models' latest rows) and by
// release (each release's rows predicted by a fit on the other releases'
// MoE rows). Sets the two MoE constants of `*constants`.
Status fit_moe_constants(const std::vector<AccuracyCase>& cases, const std::vector<bool>& latest,
                         const CalibrationOptions& copt, AccuracyConstants* constants,
                         boost::json::object* report) {
  std::vector<size_t> moe, fit_rows;
  stage_rows(
      cases, latest, [](const AccuracyCase& c) { return c.config.model.is_moe(); }, &moe,
      &fit_rows);
  if (fit_rows.empty()) return Status();
  const auto pick = [&](const std::vector<size_t>& rows) { return cases_at(cases, rows); };
  // MoE constants fitted on the `train` rows predict the `test` rows.
  struct HeldGroup {
    MoeCalibrationResult fit;
    std::vector<double> predicted, measured;
  };
  const auto held_group = [&](const std::vector<size_t>& train,
                              const std::vector<size_t>& test) -> Result<HeldGroup> {
    HeldGroup g;
    LLMPLAN_ASSIGN_OR_RETURN(g.fit, calibrate_moe(pick(train), *constants, copt));
    std::vector<AccuracyCase> t = pick(test);
    apply_constants(g.fit.constants, &t);
    LLMPLAN_ASSIGN_OR_RETURN(g.predicted, predict_iteration_times(t, nullptr));
    g.measured = measured_of(t);
    return g;
  };
  LLMPLAN_ASSIGN_OR_RETURN(const MoeCalibrationResult all,
                           calibrate_moe(pick(fit_rows), *constants, copt));
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "mixture-of-experts constants fitted on %zu MoE rows%s (dense constants held): "
                "grouped_gemm_expert_overhead_s %.3g, moe_a2a_efficiency %.4g, "
                "moe_a2a_nic_efficiency %.4g; in-sample MAPE %s\n",
                fit_rows.size(), latest.empty() ? "" : " of the latest release",
                all.constants.roofline.grouped_gemm_expert_overhead_s,
                all.constants.roofline.moe_a2a_efficiency,
                all.constants.roofline.moe_a2a_nic_efficiency, pct(all.in_sample_mape).c_str());
  stream_line(buf);
  for (const std::string& b : all.at_bound) stream_line("note: " + b + "\n");
  if (all.nic_held && all.nic_matches_cluster) {
    stream_line(
        "note: the fitted moe_a2a_nic_efficiency equals the cluster's NIC figure within 0.5 % "
        "of every row's step: 0, the cluster's figure, is used\n");
  } else if (all.nic_held) {
    stream_line(
        "note: moe_a2a_nic_efficiency is not determined by these rows (replacing it by the "
        "cluster's NIC figure moves no row's step by 0.5 %): 0, the cluster's figure, is used\n");
  }
  (*report)["rows"] = fit_rows.size();
  (*report)["in_sample_mape"] = all.in_sample_mape;
  boost::json::array bounds;
  for (const std::string& b : all.at_bound) bounds.push_back(boost::json::string(b));
  (*report)["at_bound"] = std::move(bounds);
  boost::json::object by_model, by_release;
  LLMPLAN_ASSIGN_OR_RETURN(const std::string all_rows, moe_mape(cases, moe, all.constants));
  stream_line("mixture-of-experts MAPE with these constants over all " +
              std::to_string(moe.size()) + " MoE rows (older releases included): " + all_rows +
              "\n");
  // Leave one model out.
  std::vector<std::string> models;
  for (size_t i : fit_rows) {
    const std::string& m = cases[i].config.model.name;
    if (std::find(models.begin(), models.end(), m) == models.end()) models.push_back(m);
  }
  std::vector<double> held_p, held_m;
  // Each row's held-out prediction (by the fit on the other models), for
  // the latest-release and by-release views below.
  std::vector<double> held_at(cases.size(), std::nan(""));
  for (const std::string& m : models) {
    std::vector<size_t> train, test;
    for (size_t i : fit_rows) (cases[i].config.model.name == m ? test : train).push_back(i);
    if (train.empty()) continue;
    LLMPLAN_ASSIGN_OR_RETURN(const HeldGroup g, held_group(train, test));
    const MoeCalibrationResult& f = g.fit;
    const std::vector<double>& p = g.predicted;
    const std::vector<double>& meas = g.measured;
    for (size_t k = 0; k < test.size(); ++k) held_at[test[k]] = p[k];
    held_p.insert(held_p.end(), p.begin(), p.end());
    held_m.insert(held_m.end(), meas.begin(), meas.end());
    by_model[m] = {{"rows", test.size()}, {"mape", summarise(p, meas).mape}};
    std::snprintf(buf, sizeof buf,
                  "mixture-of-experts leave-one-model-out: %s: MAPE %s (%zu rows predicted by "
                  "MoE constants fitted on the other models: %.3g s, %.4g, %.4g%s)\n",
                  m.c_str(), pct(summarise(p, meas).mape).c_str(), test.size(),
                  f.constants.roofline.grouped_gemm_expert_overhead_s,
                  f.constants.roofline.moe_a2a_efficiency,
                  f.constants.roofline.moe_a2a_nic_efficiency,
                  !f.nic_held              ? ""
                  : f.nic_matches_cluster ? " (the fit equals the cluster's NIC figure)"
                                          : " (not determined: the cluster's NIC figure)");
    stream_line(buf);
  }
  (*report)["held_out_by_model"] = std::move(by_model);
  if (!held_p.empty()) {
    (*report)["leave_one_model_out_mape"] = summarise(held_p, held_m).mape;
    stream_line("mixture-of-experts leave-one-model-out MAPE: " +
                pct(summarise(held_p, held_m).mape) + " (" + std::to_string(held_p.size()) +
                " rows)\n");
  }
  // Rows fitted over every release (the H100 form, whose releases are read
  // from its source cells): the held-out predictions above on the latest
  // release of each (system, model, precision) -- the rows #26's targets
  // are set on -- and grouped by release.
  const bool reported_releases =
      latest.empty() && std::any_of(moe.begin(), moe.end(),
                                    [&](size_t i) { return !cases[i].release.empty(); });
  if (reported_releases && !held_p.empty()) {
    const std::vector<bool> newest = latest_release_mask(cases);
    const auto group = [&](const auto& in_group) {
      std::vector<double> p, meas;
      for (size_t i : moe) {
        if (!std::isfinite(held_at[i]) || !in_group(i)) continue;
        p.push_back(held_at[i]);
        meas.push_back(cases[i].run.iteration_time_s);
      }
      return std::pair(p, meas);
    };
    boost::json::object latest_by_model, held_by_release;
    for (const std::string& m : models) {
      const auto [p, meas] =
          group([&](size_t i) { return newest[i] && cases[i].config.model.name == m; });
      if (p.empty()) continue;
      latest_by_model[m] = {{"rows", p.size()}, {"mape", summarise(p, meas).mape}};
      stream_line("mixture-of-experts leave-one-model-out, latest release: " + m + ": MAPE " +
                  pct(summarise(p, meas).mape) + " (" + std::to_string(p.size()) + " rows)\n");
    }
    const auto [lp, lm] = group([&](size_t i) { return static_cast<bool>(newest[i]); });
    (*report)["held_out_by_model_latest_release"] = std::move(latest_by_model);
    (*report)["leave_one_model_out_latest_release_mape"] = summarise(lp, lm).mape;
    stream_line("mixture-of-experts leave-one-model-out MAPE on the latest release of each "
                "(system, model, precision): " +
                pct(summarise(lp, lm).mape) + " (" + std::to_string(lp.size()) + " rows)\n");
    std::vector<std::string> names;
    for (size_t i : moe) {
      if (std::find(names.begin(), names.end(), cases[i].release) == names.end()) {
        names.push_back(cases[i].release);
      }
    }
    std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
      return release_version(a) < release_version(b);
    });
    for (const std::string& r : names) {
      const auto [p, meas] = group([&](size_t i) { return cases[i].release == r; });
      if (p.empty()) continue;
      const std::string label = r.empty() ? "(no release)" : r;
      held_by_release[label] = {{"rows", p.size()}, {"mape", summarise(p, meas).mape}};
      stream_line("mixture-of-experts leave-one-model-out by release: " + label + ": MAPE " +
                  pct(summarise(p, meas).mape) + " (" + std::to_string(p.size()) + " rows)\n");
    }
    (*report)["held_out_by_model_by_release"] = std::move(held_by_release);
  }
  // Leave one release out.
  std::vector<std::string> releases;
  for (size_t i : moe) {
    const std::string& r = cases[i].release;
    if (!r.empty() && std::find(releases.begin(), releases.end(), r) == releases.end()) {
      releases.push_back(r);
    }
  }
  if (releases.size() > 1) {
    std::vector<double> rp, rm;
    for (const std::string& r : releases) {
      std::vector<size_t> train, test;
      for (size_t i : moe) (cases[i].release == r ? test : train).push_back(i);
      if (train.empty()) continue;
      LLMPLAN_ASSIGN_OR_RETURN(const HeldGroup g, held_group(train, test));
      const std::vector<double>& p = g.predicted;
      const std::vector<double>& meas = g.measured;
      rp.insert(rp.end(), p.begin(), p.end());
      rm.insert(rm.end(), meas.begin(), meas.end());
      by_release[r] = {{"rows", test.size()}, {"mape", summarise(p, meas).mape}};
      stream_line("mixture-of-experts leave-one-release-out: " + r + ": MAPE " +
                  pct(summarise(p, meas).mape) + " (" + std::to_string(test.size()) + " rows)\n");
    }
    (*report)["held_out_by_release"] = std::move(by_release);
    (*report)["leave_one_release_out_mape"] = summarise(rp, rm).mape;
    stream_line("mixture-of-experts leave-one-release-out MAPE: " + pct(summarise(rp, rm).mape) +
                " (" + std::to_string(rp.size()) + " rows)\n");
  }
  constants->roofline.grouped_gemm_expert_overhead_s =
      all.constants.roofline.grouped_gemm_expert_overhead_s;
  constants->roofline.moe_a2a_efficiency = all.constants.roofline.moe_a2a_efficiency;
  constants->roofline.moe_a2a_nic_efficiency = all.constants.roofline.moe_a2a_nic_efficiency;
  return Status();
}

// Writes the constants of a stage-only fit (--moe-only, --hybrid-only): the
// held dense constants plus the fitted stage, with a provenance line naming
// the command (`flags`) and what it fitted, and prints the "wrote" line.
Status write_stage_constants(const AccuracyOptions& o, const std::string& gpu_name,
                             const AccuracyConstants& held, const std::string& flags,
                             const std::string& fitted, const boost::json::object* moe,
                             const boost::json::object* hybrid,
                             std::chrono::steady_clock::time_point t0) {
  std::string data;
  for (const std::string& f : o.files) {
    data += (data.empty() ? "" : " ") + f.substr(f.find_last_of('/') + 1);
  }
  const std::string src = "llmplan calibrate " + data + " --gpu " + gpu_name + " " + flags +
                          ": the " + (moe != nullptr ? "dense " : "") +
                          "constants in effect held (" +
                          (o.constants.empty() ? std::string("the preset's") : o.constants) +
                          "); only " + fitted + " fitted";
  LLMPLAN_ASSIGN_OR_RETURN(const std::string text,
                           constants_to_json(gpu_name, held, src, "not fitted: " + src, moe, hybrid));
  LLMPLAN_RETURN_IF_ERROR(write_output_file(o.output, text, "--output"));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("wrote %s (%.1f s)\n", o.output.c_str(), wall);
  return Status();
}

Status run_calibrate(const AccuracyOptions& o, const GlobalOptions& global) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> notes;
  std::string gpu_name;
  LLMPLAN_ASSIGN_OR_RETURN(const bool runs, reads_runs_files(o));
  std::vector<PublishedRun> published;
  std::vector<AccuracyCase> cases;
  if (runs) {
    LLMPLAN_ASSIGN_OR_RETURN(cases, load_runs_cases(o, global, &published, &notes, &gpu_name));
    stream_line(std::to_string(cases.size()) + " of " + std::to_string(published.size()) +
                " rows expressible; excluded by missing feature:");
    for (const auto& [feature, n] : missing_feature_counts(published)) {
      stream_line(" " + feature + " " + std::to_string(n) + ";");
    }
    stream_line("\n");
    // The constants describe dense layers; MoE rows are a test of them, never
    // fitted: cross-validation predicts them (their held-out errors make the
    // MoE groups of the band), the final fit leaves them out.
    const long moe_rows = std::count_if(cases.begin(), cases.end(), [](const AccuracyCase& c) {
      return c.config.model.is_moe();
    });
    if (moe_rows > 0) {
      const std::string why = std::to_string(moe_rows) +
                              " mixture-of-experts rows are not fitted with the dense constants "
                              "(their own MoE constants are fitted after the dense fit); "
                              "cross-validation predicts them for the error band";
      notes.push_back(why);
      stream_line(why + "\n");
    }
    if (moe_rows == static_cast<long>(cases.size())) {
      return Status::invalid_argument("calibrate: no dense row to fit in the runs file(s)");
    }
  } else {
    LLMPLAN_ASSIGN_OR_RETURN(cases, load_cases(o, global, &notes, &gpu_name));
  }
  // Progress on stderr: "fold 2 of 5: start 1 of 1, iteration 12, cost 1.963".
  auto progress = std::make_shared<Progress>("calibrate", "", o.progress);
  auto stage = std::make_shared<std::string>();
  CalibrationOptions copt = calibration_options(o, cases, progress, stage);
  if (!runs) copt.fit_flash_attention = false;  // vTrain's runs use no flash attention
  if (runs) LLMPLAN_RETURN_IF_ERROR(set_prior_reference(global, cases, &copt));
  const AccuracyConstants initial = constants_of(cases.front());
  // Runs with releases: the constants represent the latest release of each
  // (system, model, precision); older releases are predicted, never fitted.
  // (The H100 form's releases, read from its source cells, are reported by
  // the MoE stage but select no rows: fits_latest_release().)
  const bool releases = fits_latest_release(cases);
  const std::vector<bool> latest = releases ? latest_release_mask(cases) : std::vector<bool>();
  std::vector<AccuracyCase> all_cases = cases;  // for the stack drift after the fit
  std::string calibration_releases;
  if (releases) {
    std::vector<std::string> seen;
    long older = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
      if (!latest[i]) {
        ++older;
      } else if (std::find(seen.begin(), seen.end(), cases[i].release) == seen.end()) {
        seen.push_back(cases[i].release);
      }
    }
    std::sort(seen.begin(), seen.end(), [](const std::string& a, const std::string& b) {
      return release_version(a) > release_version(b);
    });
    for (const std::string& r : seen) {
      calibration_releases += (calibration_releases.empty() ? "" : ", ") + r;
    }
    const std::string why = std::to_string(older) +
                            " rows of older releases are not fitted (calibration on the latest "
                            "release of each system, model and precision: " +
                            calibration_releases + "); they are reported as stack drift";
    notes.push_back(why);
    stream_line(why + "\n");
  }

  if (o.hybrid_only) {
    // #27: only ssd_scan_efficiency, on the rows with Mamba layers, over the
    // dense and MoE constants in effect (held).
    if (!runs) return Status::invalid_argument("--hybrid-only: needs a runs file (hybrid rows)");
    if (o.folds > 0 || o.moe_only || !o.pool_gpu.empty()) {
      return Status::invalid_argument(
          "--hybrid-only: fits one constant with its own leave-one-model-out figures; give "
          "--folds 0 and no --moe-only or --pool-gpu");
    }
    AccuracyConstants held = initial;
    boost::json::object hybrid_report;
    LLMPLAN_RETURN_IF_ERROR(fit_ssd_constant(all_cases, releases ? latest : std::vector<bool>(),
                                              &held, &hybrid_report));
    if (hybrid_report.empty()) {
      return Status::invalid_argument("--hybrid-only: no row of a model with Mamba layers to fit");
    }
    return write_stage_constants(o, gpu_name, held, "--hybrid-only --folds 0",
                                 "ssd_scan_efficiency", nullptr, &hybrid_report, t0);
  }
  if (!o.pool_gpu.empty()) {
    // The pooled restricted fit (#26): the other GPU's dense rows of the
    // latest release, fitted alongside every fit below (folds included),
    // never scored.
    if (!runs || !releases || copt.prior_reference == nullptr) {
      return Status::invalid_argument(
          "--pool-gpu: needs a runs file with releases (the restricted fit), such as "
          "data/blackwell/published_runs.csv");
    }
    if (o.pool_gpu == o.gpu) return Status::invalid_argument("--pool-gpu: the same GPU as --gpu");
    AccuracyOptions po = o;
    po.gpu = o.pool_gpu;
    std::vector<PublishedRun> pool_runs;
    std::vector<std::string> pool_notes;
    std::string pool_name;
    LLMPLAN_ASSIGN_OR_RETURN(std::vector<AccuracyCase> pool,
                             load_runs_cases(po, global, &pool_runs, &pool_notes, &pool_name));
    const std::vector<bool> pool_latest = latest_release_mask(pool);
    std::vector<AccuracyCase> kept;
    for (size_t i = 0; i < pool.size(); ++i) {
      if (pool_latest[i] && !pool[i].config.model.is_moe()) kept.push_back(std::move(pool[i]));
    }
    if (kept.empty()) {
      return Status::invalid_argument("--pool-gpu: no dense row of the latest release ran on " +
                                      o.pool_gpu);
    }
    const std::string why = "pooled restricted fit: " + std::to_string(kept.size()) +
                            " dense latest-release rows of " + o.pool_gpu +
                            " fitted alongside (own GEMM scales, shared attention and host "
                            "costs), never scored";
    notes.push_back(why);
    stream_line(why + "\n");
    copt.pool = std::make_shared<const std::vector<AccuracyCase>>(std::move(kept));
  }

  if (o.moe_only) {
    // #27: only the mixture-of-experts stage, over the dense constants in
    // effect (the GPU preset's, or --constants), which are held, not refitted.
    if (!runs) return Status::invalid_argument("--moe-only: needs a runs file (MoE rows)");
    if (!o.pool_gpu.empty()) {
      return Status::invalid_argument(
          "--moe-only: --pool-gpu pools the dense fit, which --moe-only skips; give one of them");
    }
    if (o.folds > 0) {
      return Status::invalid_argument(
          "--moe-only: --folds cross-validates the dense fit, which --moe-only skips; use "
          "--folds 0 (the MoE stage reports its own leave-one-model-out and -release-out figures)");
    }
    AccuracyConstants held = initial;
    boost::json::object moe_report;
    LLMPLAN_RETURN_IF_ERROR(fit_moe_constants(all_cases, releases ? latest : std::vector<bool>(),
                                               copt, &held, &moe_report));
    if (moe_report.empty()) {
      return Status::invalid_argument("--moe-only: no mixture-of-experts row to fit");
    }
    return write_stage_constants(o, gpu_name, held, "--moe-only",
                                 "the mixture-of-experts constants", &moe_report, nullptr, t0);
  }
  if (o.folds > static_cast<int>(cases.size())) {
    return Status::invalid_argument(
        "--folds: " + std::to_string(o.folds) + " folds for " + std::to_string(cases.size()) +
        " rows would leave folds empty; give at most " + std::to_string(cases.size()));
  }
  if (o.folds > 1) {
    // k-fold cross-validation: row i is in fold i mod k (vTrain's CSV), or
    // by configuration (runs files: repeat measurements share a fold).
    const std::vector<double> meas = measured_of(cases);
    *stage = "fold 1 of " + std::to_string(o.folds) + ": ";
    const auto t_fold = std::chrono::steady_clock::now();
    LLMPLAN_ASSIGN_OR_RETURN(
        const HeldOut held,
        cross_validate(cases, folds_of(cases, o.folds, runs), o.folds, initial, copt,
                       [&](int f, const CalibrationResult& fit, const std::vector<double>& p,
                           const std::vector<double>& m) {
                         *stage = "fold " + std::to_string(f + 2) + " of " +
                                  std::to_string(o.folds) + ": ";
                         stream_line("fold " + std::to_string(f) + ": in-sample MAPE " +
                                     pct(fit.in_sample_mape) + ", held-out MAPE " +
                                     pct(summarise(p, m).mape) + "\n");
                       },
                       releases ? &latest : nullptr));
    const std::vector<double>& held_pred = held.predicted;
    if (runs) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.1f s per fold",
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t_fold)
                            .count() /
                        o.folds);
      stream_line(std::string(buf) + "\n");
    }
    std::vector<double> ps, ms, pm, mm, pe, me, pd, md;
    for (size_t i = 0; i < cases.size(); ++i) {
      if (cases[i].config.model.is_moe()) {
        pe.push_back(held_pred[i]);
        me.push_back(meas[i]);
        continue;
      }
      pd.push_back(held_pred[i]);
      md.push_back(meas[i]);
      const bool multi = cases[i].run.num_gpus > cases[i].config.cluster.gpus_per_node;
      (multi ? pm : ps).push_back(held_pred[i]);
      (multi ? mm : ms).push_back(meas[i]);
    }
    // A group without rows has no error to report ("n/a", never "0.00 %").
    const auto group = [](const std::vector<double>& p, const std::vector<double>& m) {
      return p.empty() ? std::string("n/a") : pct(summarise(p, m).mape);
    };
    stream_line(std::to_string(o.folds) + "-fold held-out MAPE: all dense " + group(pd, md) +
                ", single-node " + group(ps, ms) + " (" + std::to_string(ps.size()) +
                " rows), multi-node " + group(pm, mm) + " (" + std::to_string(pm.size()) + " rows)" +
                (pe.empty() ? std::string()
                            : ", mixture-of-experts " + group(pe, me) + " (" +
                                  std::to_string(pe.size()) + " rows, predicted, never fitted)") +
                "\n");
    if (releases) {
      // The targets: the latest release, held out, dense and MoE apart.
      std::vector<double> ld, lmd, le, lme;
      for (size_t i = 0; i < cases.size(); ++i) {
        if (!latest[i]) continue;
        const bool moe = cases[i].config.model.is_moe();
        (moe ? le : ld).push_back(held_pred[i]);
        (moe ? lme : lmd).push_back(meas[i]);
      }
      stream_line(std::to_string(o.folds) + "-fold held-out MAPE on the latest release: dense " +
                  group(ld, lmd) + " (" + std::to_string(ld.size()) + " rows), mixture-of-experts " +
                  group(le, lme) + " (" + std::to_string(le.size()) + " rows)\n");
      std::vector<std::string> names;
      const std::vector<int> by_release = release_folds(cases, &names);
      if (names.size() > 1) {
        *stage = "leave-one-release-out: ";
        LLMPLAN_ASSIGN_OR_RETURN(
            const HeldOut lo,
            cross_validate(cases, by_release, static_cast<int>(names.size()), initial, copt,
                           nullptr, nullptr, /*lenient=*/true));
        // Dense rows apart (#26: the dense target), over all releases too.
        std::vector<double> all_dp, all_dm;
        for (size_t k = 0; k < names.size(); ++k) {
          std::vector<double> p, m, dp, dm;
          for (size_t i = 0; i < cases.size(); ++i) {
            if (by_release[i] == static_cast<int>(k) && std::isfinite(lo.predicted[i])) {
              p.push_back(lo.predicted[i]);
              m.push_back(meas[i]);
              if (!cases[i].config.model.is_moe()) {
                dp.push_back(lo.predicted[i]);
                dm.push_back(meas[i]);
              }
            }
          }
          all_dp.insert(all_dp.end(), dp.begin(), dp.end());
          all_dm.insert(all_dm.end(), dm.begin(), dm.end());
          stream_line("leave-one-release-out: " + names[k] + ": MAPE " + group(p, m) + " (" +
                      std::to_string(p.size()) + " rows predicted by a fit on the other "
                      "releases; dense " + group(dp, dm) + " over " + std::to_string(dp.size()) +
                      ")\n");
        }
        stream_line("leave-one-release-out MAPE, dense rows of every release: " +
                    group(all_dp, all_dm) + " (" + std::to_string(all_dp.size()) + " rows)\n");
      }
      // The validation block: the rows the constants represent.
      std::vector<AccuracyCase> lc;
      std::vector<double> lp;
      std::vector<int> lf;
      for (size_t i = 0; i < cases.size(); ++i) {
        if (!latest[i]) continue;
        lc.push_back(cases[i]);
        lp.push_back(held_pred[i]);
        lf.push_back(held.fold[i]);
      }
      stream_line(held_out_report(lc, lp, lf, o.folds));
    } else {
      stream_line(held_out_report(cases, held.predicted, held.fold, o.folds));
    }
  }
  // The final fit: the dense rows only (of the latest release, with releases).
  if (releases) {
    std::vector<AccuracyCase> kept;
    for (size_t i = 0; i < cases.size(); ++i) {
      if (latest[i]) kept.push_back(std::move(cases[i]));
    }
    cases = std::move(kept);
  }
  std::erase_if(cases, [](const AccuracyCase& c) { return c.config.model.is_moe(); });
  if (cases.empty()) {
    return Status::invalid_argument("calibrate: no dense row of the latest release to fit");
  }

  *stage = o.folds > 1 ? "final fit on all rows: " : "";
  copt.on_line = stream_line;
  LLMPLAN_ASSIGN_OR_RETURN(CalibrationResult fit, calibrate(cases, initial, copt));
  std::printf("in-sample MAPE %s over %zu rows\n", pct(fit.in_sample_mape).c_str(), cases.size());
  if (releases) {
    // Stack drift: every release against the fitted constants.
    apply_constants(fit.constants, &all_cases);
    LLMPLAN_ASSIGN_OR_RETURN(const std::vector<double> p,
                             predict_iteration_times(all_cases, nullptr));
    for (const ReleaseDrift& d : release_drift(all_cases, p, latest)) {
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    "stack drift: %s on %s (%s, %d rows): measured/predicted %.3f (%.1f %% %s "
                    "than the fitted constants predict), MAPE %s\n",
                    d.release.c_str(), d.gpu.c_str(), d.latest ? "calibration rows" : "older",
                    d.rows, d.measured_over_predicted,
                    100 * std::abs(d.measured_over_predicted - 1),
                    d.measured_over_predicted >= 1 ? "slower" : "faster", pct(d.mape).c_str());
      stream_line(buf);
    }
  }
  boost::json::object moe_report;
  if (runs) {
    LLMPLAN_RETURN_IF_ERROR(fit_moe_constants(all_cases, releases ? latest : std::vector<bool>(),
                                               copt, &fit.constants, &moe_report));
  }
  if (!o.evaluate.empty()) {
    AccuracyOptions eo = o;
    eo.files = {o.evaluate};
    eo.constants.clear();
    std::vector<std::string> enotes;
    std::string egpu;
    std::vector<AccuracyCase> held;
    LLMPLAN_ASSIGN_OR_RETURN(const bool eruns, reads_runs_files(eo));
    if (eruns != runs) {
      return Status::invalid_argument("--evaluate: " + o.evaluate +
                                      " is not of the same kind as the calibrated files");
    }
    std::vector<PublishedRun> epublished;
    if (runs) {
      LLMPLAN_ASSIGN_OR_RETURN(held, load_runs_cases(eo, global, &epublished, &enotes, &egpu));
    } else {
      LLMPLAN_ASSIGN_OR_RETURN(held, load_cases(eo, global, &enotes, &egpu));
    }
    apply_constants(fit.constants, &held);
    LLMPLAN_ASSIGN_OR_RETURN(std::vector<double> p, predict_iteration_times(held, nullptr));
    const ErrorSummary e = summarise(p, measured_of(held));
    std::printf("held-out MAPE on %s: %s (median %s, max %s)\n", o.evaluate.c_str(),
                pct(e.mape).c_str(), pct(e.median_ape).c_str(), pct(e.max_ape).c_str());
  }
  std::string data;
  for (const std::string& f : o.files) data += (data.empty() ? "" : " ") + f.substr(f.find_last_of('/') + 1);
  std::string pinned;
  for (const std::string& b : fit.at_bound) pinned += "; " + b;
  // The restricted dense fit (#26) names its free set in its first line.
  const std::string method =
      fit.summary.rfind("restricted dense fit", 0) == 0
          ? fit.summary.substr(0, fit.summary.find('\n')) + ", Ceres on log iteration time (Huber 0.03)"
          : "Ceres fit on log iteration time (Huber 0.03, best " + std::to_string(fit.starts) +
                " of " + std::to_string(kCalibrationScreenPoints) + " screened starts polished)";
  char src[2048];
  std::snprintf(src, sizeof src,
                "llmplan calibrate %s --gpu %s: %s, robust cost %.4g, in-sample MAPE %.2f %% over "
                "%zu rows (%s)%s",
                data.c_str(), gpu_name.c_str(), method.c_str(), fit.cost, 100 * fit.in_sample_mape,
                cases.size(),
                runs ? (releases ? "published runs, the expressible rows of the latest release "
                                   "of each system, model and precision (" +
                                       calibration_releases +
                                       "); data/blackwell/README.md for sources and licences"
                                 : std::string("published runs, the expressible rows; "
                                               "data/h100/README.md for sources and licences"))
                               .c_str()
                     : "vTrain A100 data, MIT",
                pinned.c_str());
  const std::string net_src =
      copt.fit_network ? std::string(src) + "; nic_efficiency and nic_latency_s fitted"
                       : std::string("not fitted (single-node data only): ") + src;
  LLMPLAN_ASSIGN_OR_RETURN(const std::string text,
                           constants_to_json(gpu_name, fit.constants, src, net_src,
                                             moe_report.empty() ? nullptr : &moe_report));
  LLMPLAN_RETURN_IF_ERROR(write_output_file(o.output, text, "--output"));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("wrote %s (%.1f s)\n", o.output.c_str(), wall);
  return Status();
}

}  // namespace

void add_validate_command(CLI::App& app, const GlobalOptions& global, Action* action) {
  auto o = std::make_shared<AccuracyOptions>();
  CLI::App* cmd = app.add_subcommand(
      "validate", "Simulate measured runs (vTrain CSV layout) and report the prediction error");
  cmd->add_option("file", o->files, "Measured-times CSV")->required()->expected(1);
  cmd->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember({"text", "json", "md", "csv"}));
  cmd->add_option("--gpu", o->gpu, "GPU preset (default: vTrain's A100 mapping)");
  cmd->add_option("--cluster", o->cluster, "Cluster preset whose GPU to use");
  cmd->add_option("--constants", o->constants, "Calibrated constants JSON (llmplan calibrate -o)");
  cmd->add_option("--out", o->out_dir,
                  "Also write report.md, predicted_vs_measured.svg, validation.csv and "
                  "validation.json to DIR");
  o->folds = -1;
  cmd->add_option("--models", o->models,
                  "Runs files: the models table (default: models.csv beside the runs file)");
  cmd->add_option("--folds", o->folds,
                  "Runs files: K-fold held-out cross-validation (each fold calibrated on the "
                  "others), 2 to " + std::to_string(kMaxFolds) + ", 0: none (default " +
                      std::to_string(kDefaultRunsFolds) + ")")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            return text == "0" || int_in(2, kMaxFolds)(text).empty()
                       ? std::string()
                       : "must be 0 (no cross-validation) or from 2 to " +
                             std::to_string(kMaxFolds) + ", got " + text;
          },
          "0 or in [2 - " + std::to_string(kMaxFolds) + "]", "FOLDS"));
  cmd->add_option("--max-iterations", o->max_iterations,
                  "Runs files: solver iterations per start of each fold's calibration")
      ->capture_default_str()
      ->check(int_in(1, kMaxCalibrationIterations));
  cmd->add_option("--starts", o->starts,
                  "Runs files: screened starting points each fold's calibration polishes")
      ->capture_default_str()
      ->check(int_in(1, kCalibrationScreenPoints));
  cmd->add_flag("--progress", o->progress,
                "Progress lines of the folds' calibrations on stderr also when it is not a "
                "terminal");
  cmd->callback([o, &global, action] { *action = [o, &global] { return run_validate(*o, global); }; });
}

void add_calibrate_command(CLI::App& app, const GlobalOptions& global, Action* action) {
  auto o = std::make_shared<AccuracyOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate", "Fit a GPU's Roofline (and network) constants to measured iteration times");
  cmd->add_option("files", o->files, "Measured-times CSVs")->required();
  cmd->add_option("--gpu", o->gpu, "GPU preset to calibrate")->required();
  cmd->add_option("-o,--output", o->output, "Constants JSON to write")->required();
  cmd->add_option("--constants", o->constants, "Starting constants JSON");
  cmd->add_option("--models", o->models,
                  "Runs files: the models table (default: models.csv beside the runs file)");
  cmd->add_option("--evaluate", o->evaluate, "Also report the error on this held-out CSV");
  cmd->add_option("--folds", o->folds,
                  "Also run K-fold cross-validation (row i in fold i mod K); 2 to " +
                      std::to_string(kMaxFolds) + ", 0: none")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            return text == "0" || int_in(2, kMaxFolds)(text).empty()
                       ? std::string()
                       : "must be 0 (no cross-validation) or from 2 to " +
                             std::to_string(kMaxFolds) + ", got " + text;
          },
          "0 or in [2 - " + std::to_string(kMaxFolds) + "]", "FOLDS"));
  cmd->add_option("--max-iterations", o->max_iterations, "Solver iterations per start")
      ->capture_default_str()
      ->check(int_in(1, kMaxCalibrationIterations));
  cmd->add_option("--starts", o->starts,
                  "How many of the " + std::to_string(kCalibrationScreenPoints) +
                      " screened starting points to polish with Ceres")
      ->capture_default_str()
      ->check(int_in(1, kCalibrationScreenPoints));
  cmd->add_flag("--progress", o->progress,
                "Progress lines (screen, start, iteration, cost) on stderr also when it is not a "
                "terminal");
  cmd->add_option("--pool-gpu", o->pool_gpu,
                  "Runs files with releases: fit the restricted dense constants on this GPU's "
                  "dense latest-release rows too (same generation, e.g. gb200 with --gpu b200): "
                  "own GEMM scales, shared attention and host costs; only --gpu's rows are scored");
  cmd->add_flag("--moe-only", o->moe_only,
                "Runs files: hold the dense constants in effect (the preset's or --constants) and "
                "fit only the mixture-of-experts constants, with their held-out figures");
  cmd->add_flag("--hybrid-only", o->hybrid_only,
                "Runs files: hold the constants in effect (the preset's or --constants) and fit "
                "only ssd_scan_efficiency (the Mamba-2 SSD scan) on the rows of models with Mamba "
                "layers, with its leave-one-model-out figures");
  cmd->callback([o, &global, action] { *action = [o, &global] { return run_calibrate(*o, global); }; });
}

}  // namespace llmplan::planner

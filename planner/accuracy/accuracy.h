// Validation and calibration of the simulator against measured iteration
// times (`llmplan validate`, `llmplan calibrate`).
//
// Every measured run is simulated under the conditions its data states
// (vTrain's Megatron-DeepSpeed runs): the run is turned into a vTrain config
// and read by presets::load_vtrain_config_text, so `llmplan validate` and
// `llmplan simulate --vtrain-config` agree exactly. That means fp16, full
// recomputation, 1F1B, no gradient bucketing (one all-reduce after the
// backward), 8 GPUs per node, vocab 50257, learned positions, GeLU 4h MLP,
// no flash attention (Megatron-DeepSpeed of 2022-23 ran unfused softmax
// attention), intra-node 150 GB/s and inter-node 800 Gb/s per node.
#ifndef LLMPLAN_PLANNER_ACCURACY_ACCURACY_H_
#define LLMPLAN_PLANNER_ACCURACY_ACCURACY_H_

#include <memory>
#include <functional>
#include <utility>
#include <string>
#include <vector>

#include "planner/accuracy/measured_csv.h"
#include "planner/accuracy/runs_file.h"
#include "presets/catalog.h"
#include "presets/sim_config.h"
#include "simulator/cluster.h"
#include "simulator/cost_model.h"
#include "base/status.h"

namespace llmplan::planner {

// One measured run with the simulation inputs that reproduce it.
// For a runs file (planner/accuracy/runs_file.h) `run` holds the row's line,
// measured step time and layout (t, d, p, batches, shape), `name` and
// `origin` its name and short source id; both are empty for vTrain's CSV.
struct AccuracyCase {
  MeasuredRun run;
  std::string source;  // the file it came from
  presets::SimConfig config;
  std::string name;
  std::string origin;
  // The software stack the run was measured on: "megatron-core" (Megatron-LM
  // / NeMo with Transformer Engine's fused kernels: what the simulator's
  // lowering and the GPU presets' constants describe) or "pytorch-fsdp"
  // (MosaicML llm-foundry / Composer: eager PyTorch modules under PyTorch
  // FSDP), whose kernels run at RooflineConstants::pytorch_fsdp_efficiency
  // of the Megatron-Core efficiencies (fitted in [0.5, 1] by calibrate when
  // the cases hold both stacks).
  std::string stack = "megatron-core";
  // The software release (PublishedRun::release; empty when the data does
  // not state one) and the row's system ("DGX-B200", ...; empty likewise).
  std::string release{};
  std::string system{};
  // The release was read from the H100 form's source cell
  // (PublishedRun::release_from_source): it is reported, but the rows are
  // calibrated as before, every row fitted (fits_latest_release()).
  bool release_from_source = false;
};

// Whether calibration fits only the latest release of each group
// (latest_release_mask()): some case states its release in its own column
// (the Blackwell form). Releases read from the H100 form's source cells
// (AccuracyCase::release_from_source) are reported only.
bool fits_latest_release(const std::vector<AccuracyCase>& cases);

// The calibration group of a case with a release: system, model (with its
// MoE capacity factor: token-drop variants are their own group) and
// precision with its FP8 recipe ("DGX-B200|qwen3-30b-a3b|cf0|fp8-mxfp8").
std::string release_group_key(const AccuracyCase& c);

// The precision of a case with its FP8 recipe: "bf16", "fp16",
// "fp8-current", "fp8-delayed", "fp8-mxfp8", or the precision's own name.
std::string precision_recipe(const AccuracyCase& c);

// For each case: true when it was measured on the latest release of its
// release_group_key() (release_version() order; a release without a version
// sorts first), or states no release. Calibration fits only these rows (the
// constants represent the latest software stack); the older releases are
// reported as "stack drift". Pure.
std::vector<bool> latest_release_mask(const std::vector<AccuracyCase>& cases);

// Leave-one-release-out folds: the fold of each case is the index of its
// release among the distinct releases in order of first appearance (cases
// without a release form one more fold, ""); `releases` (may be null)
// receives the releases in fold order.
std::vector<int> release_folds(const std::vector<AccuracyCase>& cases,
                               std::vector<std::string>* releases);

// The cluster `c` is simulated on: its config's, for the "pytorch-fsdp"
// stack with the GEMM, flash-attention and memory efficiencies times the
// GPU's RooflineConstants::pytorch_fsdp_efficiency.
simulator::Cluster case_cluster(const AccuracyCase& c);

// The cases of the expressible rows of a runs file, in file order (rows with
// missing features are left out: report them from the PublishedRun list).
std::vector<AccuracyCase> make_runs_cases(const std::vector<PublishedRun>& runs);

// The feature groups a runs-file case belongs to, as (grouping, key) pairs:
// source, precision, moe (a mixture-of-experts model: yes / no), ZeRO stage,
// recompute, t > 1, p > 1, interleaved, seq >= 8192, GPUs >= 128, multi-node;
// for a case with a release also gpu, precision recipe (precision_recipe()),
// release, and "gpu / dense-moe / release" ("b200 dense latest", "b200 moe
// older": the groups of the accuracy targets, latest_release_mask()) --
// pass `latest` for the last one (true when omitted).
std::vector<std::pair<std::string, std::string>> feature_groups(const AccuracyCase& c,
                                                                bool latest = true);

// The configuration key of a case for fold assignment (assign_folds):
// model, sequence, GPUs and the whole plan (expert parallelism and the MoE
// all-to-all overlap included), so that repeat measurements of one
// configuration share a fold.
std::string configuration_key(const AccuracyCase& c);

// The calibrated constants of one GPU and its network.
struct AccuracyConstants {
  simulator::RooflineConstants roofline;
  simulator::NetworkConstants network;
};

// Builds the cases. `gpu` (may be null) replaces the GPU of vTrain's A100
// mapping (its datasheet figures and Roofline constants), keeping vTrain's
// stated link bandwidths. Errors name the CSV file and line.
Result<std::vector<AccuracyCase>> make_accuracy_cases(const std::vector<MeasuredRun>& runs,
                                                      const std::string& source,
                                                      const presets::Catalog& catalog,
                                                      const simulator::GpuSpec* gpu);

// Applies `constants` to every case: the Roofline constants and the network
// latencies and NIC efficiency (NVLink efficiency stays as vTrain's mapping
// sets it: its intra-node figure is already an achieved bandwidth).
void apply_constants(const AccuracyConstants& constants, std::vector<AccuracyCase>* cases);

// The constants the cases currently carry (those of the first case).
AccuracyConstants constants_of(const AccuracyCase& c);

// Simulated iteration time of every case, in seconds (OpenMP over cases).
// `cost_model` may be null (Roofline). Errors name the file and line.
// `fits` (may be null) receives StepReport::fits_in_memory of each case;
// `peak_memory_bytes` and `memory_capacity_bytes` (each may be null) its
// StepReport::peak_memory_bytes and memory_capacity_bytes.
Result<std::vector<double>> predict_iteration_times(
    const std::vector<AccuracyCase>& cases,
    const std::shared_ptr<const simulator::CostModel>& cost_model,
    std::vector<bool>* fits = nullptr, std::vector<double>* peak_memory_bytes = nullptr,
    std::vector<double>* memory_capacity_bytes = nullptr);

// Absolute percentage errors summarised.
struct ErrorSummary {
  int rows = 0;
  double mape = 0;        // mean |pred - meas| / meas, fraction
  double median_ape = 0;
  double max_ape = 0;
  double mean_signed = 0; // mean (pred - meas) / meas
};
ErrorSummary summarise(const std::vector<double>& predicted, const std::vector<double>& measured);

// The measured iteration times of `cases`, in order.
std::vector<double> measured_of(const std::vector<AccuracyCase>& cases);

// A fraction as a percentage with two decimals: 0.0123 -> "1.23 %".
std::string percent_text(double fraction);

// Per-group errors: the key of each case for one grouping.
enum class Grouping { kGpus, kModel, kPlan, kMicroBatch, kHidden, kTensor, kPipeline, kData };
const char* to_string(Grouping g);
std::string group_key(const MeasuredRun& run, Grouping g);

struct GroupError {
  std::string key;
  ErrorSummary error;
};
// Groups in order of first appearance.
std::vector<GroupError> group_errors(const std::vector<AccuracyCase>& cases,
                                     const std::vector<double>& predicted, Grouping g);

// Starting points the calibration screens (a fixed grid).
inline constexpr int kCalibrationScreenPoints = 32;
// Most solver iterations per polished start (each costs about nine
// simulations per case).
inline constexpr int kMaxCalibrationIterations = 10000;

// Where a running calibration is, for a progress display.
struct CalibrationProgress {
  enum class Stage { kScreen, kPolish } stage = Stage::kScreen;
  int step = 0;        // screen point or polished start, from 1
  int steps = 0;       // screen points or starts in all
  int iteration = 0;   // Ceres iteration within the start (polish only)
  double cost = 0;     // the best screen cost so far, or the start's current cost
};

// Calibration settings.
struct CalibrationOptions {
  bool fit_network = false;  // also NIC efficiency and latency (multi-node data)
  // Also flash_attention_efficiency (data with flash attention), bounded by
  // the GPU's ceiling (GpuSpec::ceilings.flash_attention_efficiency).
  bool fit_flash_attention = false;
  int num_threads = 2;       // Ceres' residual evaluation
  int max_iterations = 40;   // per polished start
  int starts = 1;            // how many of the best screened points to polish (>= 1)
  // Optional observers, called on the calling thread while calibrate() runs:
  // on_line with each line of CalibrationResult::summary as soon as it is
  // known (so a command can stream it), on_progress after every screened
  // point and every Ceres iteration. They must not throw.
  std::function<void(const std::string& line)> on_line;
  std::function<void(const CalibrationProgress&)> on_progress;
  // The restricted dense fit (#26, planner/accuracy/restricted_fit.h): when
  // set, a calibrated reference GPU (h100-sxm) whose constants, scaled by
  // datasheet ratios, hold what rows too few for the full fit cannot
  // determine; calibrate() then fits only the free set whenever the rows
  // are fewer than kMinRowsPerFreeConstant per full-fit constant. Null: the
  // full fit always.
  std::shared_ptr<const simulator::GpuSpec> prior_reference;
  // The pooled restricted fit (#26, restricted_fit.h): dense rows of another
  // GPU of the same generation (B200 and GB200: one Blackwell die, GB200 at
  // higher clocks and power), fitted alongside the cases: each GPU keeps its
  // own GEMM-efficiency scale(s), the other free constants (attention, host
  // launch cost) take one value for both, and every held constant is each
  // GPU's own prior. Only the cases are scored and returned; the pool is
  // never a test row. Null or empty: the cases alone. Used only with
  // prior_reference (the restricted fit).
  std::shared_ptr<const std::vector<AccuracyCase>> pool;
};
struct CalibrationResult {
  AccuracyConstants constants;
  double cost = 0;                    // final robust cost
  double in_sample_mape = 0;          // on the fitted cases
  int starts = 0;                     // starts polished
  std::vector<std::string> at_bound;  // fitted parameters pinned at a bound
  std::string summary;                // the screen, one line per start, bound notes
};
// Fits the constants to the cases by non-linear least squares (Ceres) on
// log(predicted / measured) with a Huber loss (delta 0.03, close to the L1
// loss that MAPE measures) and bounded
// parameters (gemm_efficiency <= 0.90, and the GEMM and memory efficiencies
// at most the physical ceilings of the first case's GPU, GpuSpec::ceilings). Starting points: a fixed grid of
// kCalibrationScreenPoints is screened (one simulation per case each) and the best `starts` of them
// are polished with Ceres; the result does not depend on `initial`'s fitted
// values, only its fixed ones (gemm_tile, comm_compute_slowdown, flash
// attention efficiency unless fit_flash_attention (then it starts from 0.5
// within [0.2, ceiling]), NVLink figures, and the NIC figures unless
// fit_network (then they start from 0.8 and 10 us)). When the cases hold
// FP8 runs, fp8_gemm_efficiency is fitted too, from 0.6 within [0.3, the
// GPU's ceilings.fp8_gemm_efficiency]; when they hold NVFP4 runs,
// fp4_gemm_efficiency likewise within [0.3, ceilings.fp4_gemm_efficiency];
// gemm_efficiency (16-bit) is fitted only when they hold 16-bit runs, else
// held at `initial`'s value. Deterministic: the
// same cases give the same constants. Cost: about (kCalibrationScreenPoints
// + starts x max_iterations x 9) simulations per case. InvalidArgument when
// there are no cases, starts is outside [1, kCalibrationScreenPoints] or
// max_iterations outside [1, kMaxCalibrationIterations]; FailedPrecondition
// (one line) when no polished start reaches a usable solution.
Result<CalibrationResult> calibrate(const std::vector<AccuracyCase>& cases,
                                    const AccuracyConstants& initial,
                                    const CalibrationOptions& options);

// Mixture-of-experts constants (#27): RooflineConstants::
// grouped_gemm_expert_overhead_s, moe_a2a_efficiency and
// moe_a2a_nic_efficiency, fitted on MoE rows
// only with every other constant held at `base` (the dense fit). Bounds:
// the per-expert overhead in [0, kGroupedGemmExpertOverheadCeilingS], the
// all-to-all efficiency in [0.1, kMoeA2aEfficiencyCeiling] (their sources
// beside the constants). Screened from a fixed grid (not from `base`'s MoE
// values) and polished with Ceres (Huber 0.03 on log(predicted / measured),
// as calibrate()), so the same cases give the same constants.
// InvalidArgument when `cases` is empty or holds a dense row.
inline constexpr double kGroupedGemmExpertOverheadCeilingS = 10e-6;
inline constexpr double kMoeA2aEfficiencyCeiling = 0.81;
inline constexpr double kMoeA2aEfficiencyFloor = 0.2;
// The NIC all-to-all efficiency is fitted only when some row's expert group
// spans nodes, and kept only when the rows determine it: replacing it by
// the cluster's NIC figure (moe_a2a_nic_efficiency 0) must move some row's
// predicted step by at least kMoeNicIdentifiedChange (in log time);
// otherwise the result holds 0 and nic_held is set.
inline constexpr double kMoeNicIdentifiedChange = 0.005;
struct MoeCalibrationResult {
  AccuracyConstants constants;  // base with the MoE constants fitted
  double cost = 0;
  double in_sample_mape = 0;
  std::vector<std::string> at_bound;  // "moe_a2a_efficiency at its upper bound", ...
  // The fitted moe_a2a_nic_efficiency moved no row by
  // kMoeNicIdentifiedChange from the cluster's NIC figure (see above): it
  // is 0, the cluster's figure.
  bool nic_held = false;
  // With nic_held: the rows do depend on the NIC figure (the efficiency
  // floor moves some row by kMoeNicIdentifiedChange or more), so the fit
  // equals the cluster's figure within the threshold rather than leaving
  // it undetermined.
  bool nic_matches_cluster = false;
};
Result<MoeCalibrationResult> calibrate_moe(const std::vector<AccuracyCase>& cases,
                                           const AccuracyConstants& base,
                                           const CalibrationOptions& options);

// Hybrid Mamba-2 constant (#27): RooflineConstants::ssd_scan_efficiency,
// the fraction of the dense 16-bit peak the SSD chunked scan reaches, fitted
// on rows of models with Mamba layers only, every other constant held at
// `base`. Bounds: [kSsdScanEfficiencyFloor, the GPU's flash attention
// ceiling] (GpuSpec::ceilings; the sources beside the floor). One
// parameter: golden-section search on its logarithm over the Huber cost of
// calibrate() (robust_cost), 60 steps from the bounds, so the same cases
// give the same constant. InvalidArgument when `cases` is empty or holds a
// row of a model without Mamba layers.
//
// The floor: mamba_ssm's mamba_chunk_scan_combined (the Triton SSD kernels)
// forward at batch 16, 16,384 tokens, 8 heads of 128, state 128, chunk 64
// ran 12.45 ms (fla-org/flash-linear-attention pull request 50, 2024-08,
// GPU not named): 2.06e11 FLOPs by Model::ssd_flops_per_token's count =
// 16.6 TFLOP/s, 0.0066 of a GB200's 2,500 TFLOP/s peak. Newer kernels and
// longer runs can only be faster, so no fit may go below 0.005.
inline constexpr double kSsdScanEfficiencyFloor = 0.005;
struct SsdCalibrationResult {
  AccuracyConstants constants;  // base with ssd_scan_efficiency fitted
  double cost = 0;
  double in_sample_mape = 0;
  std::vector<std::string> at_bound;  // "ssd_scan_efficiency at its upper bound"
};
Result<SsdCalibrationResult> calibrate_ssd(const std::vector<AccuracyCase>& cases,
                                           const AccuracyConstants& base);

// Whether the case's model has Mamba-2 layers (calibrate_ssd's rows).
bool has_mamba_layers(const AccuracyCase& c);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_ACCURACY_ACCURACY_H_

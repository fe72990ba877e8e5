// The hardware a job runs on: one GPU type, nodes of it, and the network.
#ifndef LLMPLAN_SIMULATOR_CLUSTER_H_
#define LLMPLAN_SIMULATOR_CLUSTER_H_

#include <cstddef>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "simulator/collective_curve.h"
#include "simulator/plan.h"
#include "base/status.h"

namespace llmplan::simulator {

// Constants of the analytic (Roofline) kernel-time model for one GPU type.
// They are calibrated against measured iteration times (`llmplan
// calibrate`); the built-in presets carry the fitted values and where they
// came from.
struct RooflineConstants {
  // Fraction of dense peak a large, well-shaped GEMM reaches.
  double gemm_efficiency = 0.75;
  // Per-tile fixed cost (prologue, epilogue) in units of the inner
  // dimension: a GEMM of inner dimension k runs at k / (k + gemm_dim_half)
  // of the main loop's rate.
  double gemm_dim_half = 64.0;
  // Output tile edge (elements) for tile padding and wave quantisation.
  double gemm_tile = 128.0;
  // Fraction of the fp8 peak a large, well-shaped FP8 GEMM reaches (the
  // same tile, wave and inner-dimension shape factors as gemm_efficiency).
  double fp8_gemm_efficiency = 0.6;
  // Fraction of the FP4 peak (peak_fp4_flops) a large, well-shaped NVFP4
  // GEMM reaches (the same shape factors as gemm_efficiency).
  double fp4_gemm_efficiency = 0.5;
  // Fraction of peak reached by a fused flash-attention kernel.
  double flash_attention_efficiency = 0.55;
  // Fraction of HBM bandwidth reached by memory-bound kernels.
  double memory_efficiency = 0.70;
  // Host launch interval per kernel (PyTorch dispatch + launch), seconds: the
  // host issues kernels this far apart (the launch queue, lowering.h).
  double kernel_overhead_s = 4e-6;
  // How far the host may issue kernels ahead of the GPU's finished work,
  // seconds (the launch queue's run-ahead window, lowering.h). Infinity: no
  // limit; 0: every launch waits for the previous kernel to finish.
  double host_run_ahead_s = std::numeric_limits<double>::infinity();
  // Host-side cost per micro-batch per pipeline chunk (Python, scheduling), seconds.
  double microbatch_overhead_s = 0.0;
  // Fixed per-iteration host cost (optimizer bookkeeping, logging), seconds.
  double iteration_overhead_s = 0.0;
  // SM contention: the fraction of an overlapped collective's hidden time
  // that is added to the compute it overlaps (NCCL runs one thread block per
  // channel on an SM, so those SMs are taken from the GEMMs). Applied to the
  // overlaps the plan asks for (tp_comm_overlap, FSDP prefetch and gradient
  // reduce-scatter, overlap_param_gather), not to the stage 0/1 gradient
  // buckets the A100 calibration already absorbs. Default 0.12: about 16
  // NCCL channels (one SM each, NCCL_MAX_NCHANNELS) of the 132 SMs of an
  // H100 SXM. The contention itself is the effect measured by Rashidi et
  // al., "Enabling Compute-Communication Overlap in Distributed Deep
  // Learning Training Platforms", ISCA 2021. An estimate for calibrate to
  // fit; >= 0 (0: overlap is free).
  double comm_compute_slowdown = 0.12;
  // Not used by simulate(): the speed of kernels run by a PyTorch-FSDP
  // training stack (eager PyTorch modules, e.g. MosaicML llm-foundry)
  // relative to the Megatron-Core / Transformer Engine stack the lowering
  // models, as a factor on the GEMM, flash-attention and memory
  // efficiencies. `llmplan validate` / `calibrate` apply it to runs measured
  // on that stack and fit it in [0.5, 1]; 1 = the same speed.
  double pytorch_fsdp_efficiency = 1.0;
  // Mixture of experts (#27), fitted by `llmplan calibrate` on MoE rows only
  // (dense rows never see them):
  // GPU time per local expert of each grouped expert GEMM (its own tile
  // schedule, prologue and epilogue, and the launch of Transformer Engine's
  // per-expert GEMMs), seconds: a grouped GEMM over e local experts costs
  // e x this on top of its roofline time. 0: none. Bounded by what the
  // project's H100 profile measured (data/profiles/README.md: a loop of
  // per-expert cuBLAS GEMMs over the strided-batched one, 6-8 us per
  // expert at m = 128..4096).
  double grouped_gemm_expert_overhead_s = 0.0;
  // Fraction of one direction of the NVLink bandwidth the MoE token
  // dispatch/combine all-to-alls reach on this GPU's training stack; when
  // > 0 it replaces the cluster's min(nvlink_efficiency,
  // nvlink_a2a_efficiency) for all-to-alls (collectives.h). 0: the
  // cluster's. Bounded by the best published MoE all-to-all (DeepEP, see
  // planner/accuracy/calibration.cc).
  double moe_a2a_efficiency = 0.0;
  // Likewise for the inter-node part of those all-to-alls: the fraction of
  // the per-GPU NIC bandwidth they reach; when > 0 it replaces the cluster's
  // nic_efficiency for all-to-alls. 0: the cluster's. At most 1 (DeepEP's
  // internode dispatch/combine reach 43-58 GB/s of a ~50 GB/s CX7 NIC,
  // counting NVLink-forwarded traffic: docs/legacy.md of deepseek-ai/DeepEP).
  double moe_a2a_nic_efficiency = 0.0;
  // Hybrid Mamba-2 models (#27): fraction of the dense 16-bit peak that the
  // SSD chunked scan (KernelKind::kSsdScan: mamba_ssm's Triton kernels chunk
  // cumsum, chunk state, state passing, bmm and chunk scan, run one after
  // the other through HBM) reaches on this GPU's training stack; when > 0 it
  // replaces flash_attention_efficiency for that kernel. 0: the flash
  // attention efficiency (the scan's small chunk-local matmuls tiled like
  // flash attention's). Fitted on hybrid rows only, bounded above by the
  // flash attention ceiling (presets/gpus.json cites the bounds); models
  // without Mamba layers never see it.
  double ssd_scan_efficiency = 0.0;

  friend bool operator==(const RooflineConstants&, const RooflineConstants&) = default;
};

// Physical ceilings of the Roofline efficiencies: what the hardware's
// libraries reach at best (e.g. cuBLAS on a large, well-shaped GEMM).
// `llmplan calibrate` never fits an efficiency above its ceiling, so a fit
// cannot absorb other errors into an impossible kernel speed. 1 means "no
// ceiling known". Presets cite where each ceiling comes from.
struct RooflineCeilings {
  double gemm_efficiency = 1.0;
  double fp8_gemm_efficiency = 1.0;
  double fp4_gemm_efficiency = 1.0;
  double memory_efficiency = 1.0;
  double flash_attention_efficiency = 1.0;
  std::string source;  // the citations, for reports

  friend bool operator==(const RooflineCeilings&, const RooflineCeilings&) = default;
};

// Most quantiles one GPU's validation may store.
inline constexpr size_t kMaxValidationQuantiles = 99;
// Most band groups one GPU's validation may store (error_band.h: 96 feature
// combinations times 6 levels, fewer distinct keys).
inline constexpr size_t kMaxBandGroups = 1024;

// What is known about the accuracy of this GPU's constants: whether they
// were fitted to measured iteration times, the range of utilisation that
// data covered, and the distribution of held-out errors of k-fold
// cross-validation (measured / predicted iteration time). An uncalibrated
// GPU (the default, and any user GPU without a "validation" object) has no
// error distribution: its error is unknown. See simulator/error_band.h for
// the band the planner reports and simulator/caveats.h for the flags a
// simulated result carries.
struct GpuValidation {
  bool calibrated = false;
  // Model FLOPs utilisation of the measured runs the constants were fitted
  // on (model FLOPs / (time * GPUs * peak), the peak of the run's own precision:
  // fp8 for FP8 runs); 0 when not calibrated.
  double min_mfu = 0;
  double max_mfu = 0;
  // The highest MFU against the FP8 peak of the FP8 runs among them; 0 when
  // none ran in FP8 (FP8 plans are then held to max_mfu). The caveat
  // "mfu-above-validated" holds an FP8 plan to this, a 16-bit plan to max_mfu.
  double max_mfu_fp8 = 0;
  // The highest MFU against the FP4 peak of the NVFP4 runs among them (JSON
  // "max_mfu_fp4"); 0 when none ran in NVFP4: an NVFP4 plan then carries the
  // caveat "nvfp4-unvalidated" (its fp4_gemm_efficiency was never fitted),
  // otherwise "mfu-above-validated" holds it to this.
  double max_mfu_fp4 = 0;
  // Whether the measured runs used fused flash attention (if not, the
  // flash_attention_efficiency constant was never fitted).
  bool flash_attention = false;
  // (probability, measured / predicted iteration time) over the held-out
  // rows of cross-validation, probabilities strictly increasing in (0, 1)
  // and ratios non-decreasing and positive; empty when not calibrated.
  std::vector<std::pair<double, double>> quantiles;
  int samples = 0;              // held-out rows behind the quantiles
  // The same quantiles over the held-out rows of one group of similar runs
  // (error_band.h: band_group_keys), for the groups with at least
  // kMinBandSamples rows; the band of a plan comes from the finest group it
  // belongs to (error_band()). Empty: every plan gets the pooled quantiles.
  struct Group {
    std::string key;  // one of band_group_keys() of some BandFeatures, never "all runs"
    int samples = 0;
    std::vector<std::pair<double, double>> quantiles;  // as `quantiles`
    friend bool operator==(const Group&, const Group&) = default;
  };
  std::vector<Group> groups;
  std::string source;           // the measured data and how the MFU range was computed
  std::string held_out_source;  // the command that computed the quantiles
  // Not fitted on this GPU: the Roofline constants were carried over from
  // the fit of the GPU named here (same compute die; datasheet bandwidth and
  // capacity of this one). calibrated stays false.
  std::string derived_from;

  friend bool operator==(const GpuValidation&, const GpuValidation&) = default;
};

// One GPU type's datasheet figures (dense, no sparsity), plus its Roofline
// constants, their physical ceilings and what is known of their accuracy.
struct GpuSpec {
  std::string name;
  double peak_bf16_flops = 0;     // dense bf16 tensor-core FLOP/s
  double peak_fp16_flops = 0;     // dense fp16 tensor-core FLOP/s
  // Dense fp8 tensor-core FLOP/s; 0: the GPU has no FP8 tensor cores (A100),
  // and a plan with precision fp8 is an error on it.
  double peak_fp8_flops = 0;
  // MXFP8 block scaling (Fp8Recipe::kMxfp8) in the tensor cores (Blackwell).
  bool fp8_block_scaling = false;
  // Dense FP4 (NVFP4) tensor-core FLOP/s; 0: the GPU has no FP4 tensor cores
  // (Hopper and older), and a plan with precision nvfp4 is an error on it.
  double peak_fp4_flops = 0;
  double hbm_bytes = 0;
  double hbm_bytes_per_s = 0;
  double nvlink_bytes_per_s = 0;  // per GPU, both directions together (datasheet figure)
  double tdp_w = 0;
  int num_sms = 0;
  RooflineConstants roofline;
  RooflineCeilings ceilings;
  GpuValidation validation;

  friend bool operator==(const GpuSpec&, const GpuSpec&) = default;
};

// Dense tensor-core FLOP/s of `gpu` in `precision` (0 for fp8 on a GPU
// without FP8, for nvfp4 on one without FP4).
double peak_flops(const GpuSpec& gpu, Precision precision);

// The peak simulate()'s MFU (StepReport::mfu) is reported against: the
// 16-bit peak, fp8 and nvfp4 plans included (fp16 plans: the fp16 peak;
// else bf16).
double mfu_reference_peak_flops(const GpuSpec& gpu, Precision precision);

// An MFU of `precision` on `gpu` (against mfu_reference_peak_flops) as a
// fraction of the peak of the precision itself (fp8 plans: the FP8 dense
// peak, nvfp4 plans the FP4 one); 0 when that peak is unknown.
double mfu_of_precision_peak(double mfu, const GpuSpec& gpu, Precision precision);

// The same MFU as model FLOP/s per GPU (what NVIDIA's and Meta's tables
// publish as "model TFLOP/s per GPU", here in FLOP/s).
double model_flops_per_gpu(double mfu, const GpuSpec& gpu, Precision precision);

// OK when `gpu` can run `plan`'s precision: fp8 needs FP8 tensor cores
// (peak_fp8_flops > 0), the MXFP8 recipe block scaling as well; nvfp4 needs
// FP4 tensor cores (peak_fp4_flops > 0: Blackwell).
// InvalidArgument naming the GPU and the field otherwise.
Status check_precision(const Plan& plan, const GpuSpec& gpu);

struct Cluster;
// OK unless `plan` offloads activations to the CPU (Plan::cpu_offload_layers
// > 0) on a cluster without a host link figure (Cluster::
// host_link_bytes_per_s 0): InvalidArgument naming plan.cpu_offloading_num_layers
// and the cluster.
Status check_host_link(const Plan& plan, const Cluster& cluster);

// Constants of the alpha-beta collective model: per-hop latency and the
// fraction of link bandwidth NCCL reaches. Calibrated like the Roofline.
struct NetworkConstants {
  double nvlink_latency_s = 5e-6;
  double nic_latency_s = 10e-6;
  double nvlink_efficiency = 0.8;  // of one direction of the NVLink bandwidth
  double nic_efficiency = 0.8;     // of the per-GPU NIC bandwidth
  // Fraction of one direction of the NVLink bandwidth an all-to-all (MoE
  // token dispatch/combine) reaches inside an NVLink domain; all-to-alls run
  // at min(nvlink_efficiency, this). 1: no bound beyond nvlink_efficiency,
  // the pre-Blackwell presets' behaviour (their MoE predictions stay as
  // validated). The Blackwell presets carry 0.286 from the Megatron-LM
  // DeepSeek-V3 GB200 write-up (presets/clusters.json cites it): DeepEP
  // measured 400 GB/s dispatch and 190 GB/s combine of NVLink 5's 900 GB/s
  // per direction at EP32; a dispatch and a combine of the same bytes take
  // B/400 + B/190, as if both ran at 2 / (1/400 + 1/190) = 258 GB/s = 0.286
  // of 900.
  double nvlink_a2a_efficiency = 1.0;

  friend bool operator==(const NetworkConstants&, const NetworkConstants&) = default;
};

// Nodes of `gpus_per_node` GPUs joined by NVLink inside a node and by one NIC
// per GPU across nodes (rail-optimised). num_nodes == 0 means "as many as the
// plan asks for". `collectives` holds measured in-node all-reduce curves of
// this node type (e.g. the DGX A100 presets carry vTrain's nccl-tests
// measurements); they replace the alpha-beta formula for in-node all-reduce
// of a group size they cover (collectives.h).
struct Cluster {
  // Most GPUs in one node (NVLink domain). Rack-scale NVLink domains have 72
  // (GB200 NVL72); 1024 leaves room while keeping per-group-size work (e.g.
  // looking up measured curves for every size up to a node) small.
  static constexpr int kMaxGpusPerNode = 1024;

  std::string name;
  GpuSpec gpu;
  int gpus_per_node = 8;
  // GPUs in one scale-up (NVLink) domain: groups of ranks inside one domain
  // talk over NVLink at the GPU's NVLink bandwidth, groups that span domains
  // over the NICs. 0: the node is the domain (HGX/DGX: 8); GB200 NVL72: 72
  // GPUs in a rack of 4-GPU compute trays. A multiple of gpus_per_node.
  int nvlink_domain_gpus = 0;
  int num_nodes = 0;
  double nic_bytes_per_s = 0;    // per GPU, one direction (e.g. 200 Gb/s HDR = 25e9)
  // Bandwidth from one GPU to its host CPU's memory, one direction, when all
  // GPUs of the node copy at once: what activation CPU offloading
  // (Plan::cpu_offload_layers) moves over. GB200 / GB300 NVL72: NVLink-C2C
  // to the Grace CPU (presets/clusters.json cites it). 0: not known, and
  // plans with CPU offloading are refused on this cluster (the PCIe hosts of
  // the DGX presets are left without a figure rather than guessed).
  double host_link_bytes_per_s = 0;
  NetworkConstants network;
  MeasuredCollectives collectives;  // empty: alpha-beta formula only
  double usd_per_gpu_hour = 0;   // 0: unknown

  int max_gpus() const { return num_nodes > 0 ? num_nodes * gpus_per_node : 0; }
  // The scale-up domain size: nvlink_domain_gpus, or gpus_per_node when 0.
  int nvlink_domain() const { return nvlink_domain_gpus > 0 ? nvlink_domain_gpus : gpus_per_node; }
  friend bool operator==(const Cluster&, const Cluster&) = default;
};

// OK when the figures are positive and finite, efficiencies are in (0, 1],
// latencies and per-kernel/per-micro-batch host costs are at most 1 s (the
// per-iteration cost at most an hour), 1 <= gpus_per_node <= kMaxGpusPerNode,
// nodes * gpus_per_node <= Plan::kMaxGpus, the measured collectives are
// valid (curves for groups larger than a node are allowed and unused), the
// ceilings are in (0, 1] and the validation is consistent (validate below).
// InvalidArgument names the field ("cluster.network.nic_latency_s: ...").
Status validate(const Cluster& cluster);

// OK when the MFU range is within [0, 1] with min <= max, the quantiles
// are as GpuValidation describes (at most 99) with samples >= 1 when there
// are any, and an uncalibrated GPU has no quantiles. InvalidArgument names
// the field ("validation.quantiles[2]: ...").
Status validate(const GpuValidation& validation);

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_CLUSTER_H_

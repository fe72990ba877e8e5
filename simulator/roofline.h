// The analytic cost model: kernel times from FLOPs or bytes at calibrated
// efficiencies, collective times from the alpha-beta CollectiveModel.
#ifndef LLMPLAN_SIMULATOR_ROOFLINE_H_
#define LLMPLAN_SIMULATOR_ROOFLINE_H_

#include <memory>
#include <string>

#include "simulator/cluster.h"
#include "simulator/collectives.h"
#include "simulator/cost_model.h"

namespace llmplan::simulator {

// GEMM time = max(flops / (peak * gemm_efficiency(shape)),
//                 bytes / (HBM bandwidth * memory_efficiency)).
// The efficiency is gemm_efficiency x the useful share of the output tiles
// (gemm_tile^2 each, the last row and column padded, run in waves of one
// tile per SM, batch included) x k / (k + gemm_dim_half) for each tile's
// fixed prologue and epilogue; the bytes are A and B read and C written once,
// which bounds thin GEMMs such as attention's score and value products. Fused
// flash attention runs at flash_attention_efficiency of peak (sliding-window
// kernels at windowed_attention_factor() of that). FP8 GEMMs run
// at fp8_gemm_efficiency of the fp8 peak with the same shape factors, NVFP4
// GEMMs at fp4_gemm_efficiency of the fp4 peak (GpuSpec::peak_fp4_flops).
// Grouped expert GEMMs (MoE) add grouped_gemm_expert_overhead_s per local
// expert (the batch) to that time. Memory-bound
// kernels move `bytes` at memory_efficiency of HBM bandwidth. Kernel times
// are GPU times; the host's launch interval (kernel_overhead_s) and run-ahead
// window are applied by the lowering's launch queue. All constants come from
// the cluster's GpuSpec::roofline.
//
// Immutable; safe to call from many threads.
class Roofline final : public CostModel {
 public:
  explicit Roofline(const Cluster& cluster);
  Roofline(const Cluster& cluster, CollectiveModel collectives);

  double kernel_time_s(const KernelDesc& kernel) const override;
  double collective_time_s(const CollectiveDesc& collective) const override;
  double launch_interval_s() const override { return constants_.kernel_overhead_s; }
  double host_run_ahead_s() const override { return constants_.host_run_ahead_s; }
  double microbatch_overhead_s() const override { return constants_.microbatch_overhead_s; }
  double iteration_overhead_s() const override { return constants_.iteration_overhead_s; }
  double comm_compute_slowdown() const override { return constants_.comm_compute_slowdown; }
  // The GPUs with FP4 tensor cores (the presets' Blackwell data-center
  // parts, as simulate() decides stage_memory's fp8_weight_transpose).
  bool fp8_transpose_copy() const override { return !(gpu_.peak_fp4_flops > 0); }
  std::string describe() const override;

  // The GEMM efficiency factor (0, 1] the model applies to `shape`
  // (fp8_gemm_efficiency instead of gemm_efficiency for an FP8 GEMM,
  // fp4_gemm_efficiency for an NVFP4 one).
  double gemm_efficiency(const GemmShape& shape, Precision precision = Precision::kBf16) const;
  // HBM bytes of a GEMM: A and B read once (2 bytes per element, 1 in
  // fp8, kNvfp4BytesPerElement in nvfp4), C written once in 16 bits.
  static double gemm_bytes(const GemmShape& shape, Precision precision = Precision::kBf16);
  // The factor on flash_attention_efficiency for a flash-attention kernel
  // of `shape` (m queries, n keys per query): 1 for full attention (n >= m),
  // 0.5 n / (n + kWindowedAttentionKeyOverhead) for a sliding window
  // (roofline.cc gives the measurement behind it).
  static double windowed_attention_factor(const GemmShape& shape);
  static constexpr double kWindowedAttentionKeyOverhead = 428.0;
  // The rate of an MXFP8 (block-scaled) GEMM kernel against a per-tensor
  // scaled FP8 GEMM of the same shape on Blackwell tensor cores: 6.812 /
  // 7.161 = 0.951. Transformer Engine's GEMM benchmark with pre-quantized
  // operands (kernel time only, no casts), the 12 GEMMs of a layer with
  // hidden 4096, FFN 16384, 15,872 tokens: FP8 current scaling 6.812 ms,
  // MXFP8 7.161 ms per layer (forward 2.158 / 2.365, data gradient 2.329 /
  // 2.397, weight gradient 2.325 / 2.400 ms). NVIDIA/TransformerEngine
  // docs/examples/gemm_profiling/gemm_profiling.rst @8f2e63578e10, "Autocast
  // vs Pre-quantized". That benchmark ran on a B300 (the same fifth-
  // generation tensor cores and FP8 peak as the B200); only this ratio of
  // two kernel rates is taken from it, no B300 training run. The casts are
  // costed apart (fp8_cast_bytes_per_element).
  static constexpr double kMxfp8GemmRateRatio = 6.812 / 7.161;
  const CollectiveModel& collectives() const { return collectives_; }

 private:
  GpuSpec gpu_;
  RooflineConstants constants_;
  CollectiveModel collectives_;
};

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_ROOFLINE_H_

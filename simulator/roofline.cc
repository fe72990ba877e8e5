#include "simulator/roofline.h"

#include <algorithm>
#include <cmath>

namespace llmplan::simulator {

Roofline::Roofline(const Cluster& cluster) : Roofline(cluster, CollectiveModel(cluster)) {}

Roofline::Roofline(const Cluster& cluster, CollectiveModel collectives)
    : gpu_(cluster.gpu), constants_(cluster.gpu.roofline), collectives_(std::move(collectives)) {}

double Roofline::gemm_efficiency(const GemmShape& g, Precision precision) const {
  // Output tiles of gemm_tile^2 (the last row and column padded), run in
  // waves of one tile per SM: the useful share of the SM-tile slots.
  const double tile = constants_.gemm_tile;
  const double tiles = static_cast<double>(g.batch) * std::ceil(g.m / tile) * std::ceil(g.n / tile);
  const double sms = gpu_.num_sms;
  const double waves = std::ceil(tiles / sms);
  const double useful = static_cast<double>(g.batch) * static_cast<double>(g.m) *
                        static_cast<double>(g.n) / (waves * sms * tile * tile);
  // Each tile's prologue and epilogue against its main loop over k.
  const double k = static_cast<double>(g.k);
  const double main_loop = k / (k + constants_.gemm_dim_half);
  const double peak_share = precision == Precision::kFp8     ? constants_.fp8_gemm_efficiency
                            : precision == Precision::kNvfp4 ? constants_.fp4_gemm_efficiency
                                                             : constants_.gemm_efficiency;
  return peak_share * useful * main_loop;
}

// A sliding-window kernel (keys per query n below the queries m; the
// lowering counts s x n query-key pairs, attention.cc) against the full
// causal kernel flash_attention_efficiency is calibrated on (whose FLOPs
// count all s x s pairs, so the efficiency absorbs the masked half):
// a window has no masked half (x 0.5), and its query blocks each run only a
// few key blocks, the diagonal tile half empty and the block's fixed
// prologue and epilogue weighing against them: n / (n + 428) of the full
// kernel's rate per computed pair. 428: the project's H100 profile measured
// a 128-token window at 0.23 of the full causal rate (flex attention, 64
// heads of dim 64, 8 kv heads, s = 4096 and 8192: forward 68 / 333 and
// backward 62 / 241 TFLOP/s; data/profiles/README.md, "Attention
// variants"), and 128 / (128 + 428) = 0.23. 1 for full attention.
double Roofline::windowed_attention_factor(const GemmShape& g) {
  if (g.n >= g.m) return 1.0;
  const double n = static_cast<double>(g.n);
  return 0.5 * n / (n + kWindowedAttentionKeyOverhead);
}

double Roofline::gemm_bytes(const GemmShape& g, Precision precision) {
  // bf16 / fp16 operands and output; fp8 operands with a bf16 output; nvfp4
  // operands (half a byte per element and an E4M3 scale per 16) with a bf16
  // output.
  const double in = precision == Precision::kFp8     ? 1.0
                    : precision == Precision::kNvfp4 ? kNvfp4BytesPerElement
                                                     : 2.0;
  const double out = 2.0;
  const double m = static_cast<double>(g.m), n = static_cast<double>(g.n),
               k = static_cast<double>(g.k);
  return static_cast<double>(g.batch) * (in * (m * k + k * n) + out * m * n);
}

double Roofline::kernel_time_s(const KernelDesc& k) const {
  const double peak = peak_flops(gpu_, k.precision);
  double t = 0;
  if (is_gemm(k.kind)) {
    // Kernels carry their forward GEMM's shape; the backward GEMMs of
    // C[m,n] = A[m,k] B[k,n] are dA = dC B^T (m x k, inner n) and
    // dB = A^T dC (k x n, inner m).
    GemmShape g = k.gemm;
    if (k.pass == Pass::kBackwardData) g = {k.gemm.m, k.gemm.k, k.gemm.n, k.gemm.batch};
    if (k.pass == Pass::kBackwardWeight) g = {k.gemm.k, k.gemm.n, k.gemm.m, k.gemm.batch};
    // Compute at the tile-level efficiency, or HBM traffic (A and B read
    // once, C written once) for thin GEMMs such as attention's.
    // MXFP8 GEMMs run at kMxfp8GemmRateRatio of the tensor-scaled rate.
    const double block_scaled =
        k.precision == Precision::kFp8 && k.fp8_block_scaled ? kMxfp8GemmRateRatio : 1.0;
    t = std::max(k.flops / (peak * gemm_efficiency(g, k.precision) * block_scaled),
                 gemm_bytes(g, k.precision) / (gpu_.hbm_bytes_per_s * constants_.memory_efficiency));
  } else if (k.kind == KernelKind::kFlashAttention) {
    t = k.flops / (peak * constants_.flash_attention_efficiency * windowed_attention_factor(k.gemm));
  } else if (k.kind == KernelKind::kSsdScan) {
    // The SSD scan (mamba_ssm's Triton kernels): its FLOPs at the GPU's
    // fitted scan efficiency (where none is fitted, flash attention's: small
    // chunk-local matmuls tiled alike), or its HBM traffic, whichever is
    // longer.
    const double eff = constants_.ssd_scan_efficiency > 0 ? constants_.ssd_scan_efficiency
                                                          : constants_.flash_attention_efficiency;
    t = std::max(k.flops / (peak * eff),
                 k.bytes / (gpu_.hbm_bytes_per_s * constants_.memory_efficiency));
  } else {
    t = k.bytes / (gpu_.hbm_bytes_per_s * constants_.memory_efficiency);
  }
  // Grouped expert GEMMs: a fixed GPU cost per local expert (batch).
  if (k.kind == KernelKind::kExpertFc1Gemm || k.kind == KernelKind::kExpertFc2Gemm) {
    t += static_cast<double>(k.gemm.batch) * constants_.grouped_gemm_expert_overhead_s;
  }
  // The host's launch interval (kernel_overhead_s) is not added here: the
  // lowering queues launches (launch_interval_s), see lowering.h.
  return t;
}

double Roofline::collective_time_s(const CollectiveDesc& c) const { return collectives_.time_s(c); }

std::string Roofline::describe() const { return "roofline " + gpu_.name; }

}  // namespace llmplan::simulator

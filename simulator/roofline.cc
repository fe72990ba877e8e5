#include "simulator/roofline.h"

#include <algorithm>
#include <cmath>

namespace llmplan::simulator {

Roofline::Roofline(const Cluster& cluster) : Roofline(cluster, CollectiveModel(cluster)) {}

Roofline::Roofline(const Cluster& cluster, CollectiveModel collectives)
    : gpu_(cluster.gpu), constants_(cluster.gpu.roofline), collectives_(std::move(collectives)) {}

double Roofline::gemm_efficiency(const GemmShape& g) const {
  const double half = constants_.gemm_dim_half;
  auto f = [half](double x) { return x / (x + half); };
  const double tile = constants_.gemm_tile;
  const double tiles = static_cast<double>(g.batch) * std::ceil(g.m / tile) * std::ceil(g.n / tile);
  const double sms = gpu_.num_sms;
  const double waves = std::ceil(tiles / sms);
  const double wave_efficiency = tiles / (waves * sms);
  return constants_.gemm_efficiency * f(static_cast<double>(g.m)) * f(static_cast<double>(g.n)) *
         f(static_cast<double>(g.k)) * wave_efficiency;
}

double Roofline::kernel_time_s(const KernelDesc& k) const {
  const double peak = k.precision == Precision::kBf16 ? gpu_.peak_bf16_flops : gpu_.peak_fp16_flops;
  double t = 0;
  if (is_gemm(k.kind)) {
    // Kernels carry their forward GEMM's shape; the backward GEMMs of
    // C[m,n] = A[m,k] B[k,n] are dA = dC B^T (m x k, inner n) and
    // dB = A^T dC (k x n, inner m).
    GemmShape g = k.gemm;
    if (k.pass == Pass::kBackwardData) g = {k.gemm.m, k.gemm.k, k.gemm.n, k.gemm.batch};
    if (k.pass == Pass::kBackwardWeight) g = {k.gemm.k, k.gemm.n, k.gemm.m, k.gemm.batch};
    t = k.flops / (peak * gemm_efficiency(g));
  } else if (k.kind == KernelKind::kFlashAttention) {
    t = k.flops / (peak * constants_.flash_attention_efficiency);
  } else {
    t = k.bytes / (gpu_.hbm_bytes_per_s * constants_.memory_efficiency);
  }
  // The host's launch interval (kernel_overhead_s) is not added here: the
  // lowering queues launches (launch_interval_s), see lowering.h.
  return t;
}

double Roofline::collective_time_s(const CollectiveDesc& c) const { return collectives_.time_s(c); }

std::string Roofline::describe() const { return "roofline " + gpu_.name; }

}  // namespace llmplan::simulator

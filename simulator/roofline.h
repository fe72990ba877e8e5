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

// GEMM time = flops / (peak * gemm_efficiency * f(m) f(n) f(k) * waves) +
// kernel overhead, where f(x) = x / (x + gemm_dim_half) penalises thin
// dimensions and `waves` is the fraction of the last wave of output tiles
// (gemm_tile^2 each, batch included) that keeps the SMs busy. Fused flash
// attention runs at flash_attention_efficiency of peak. Memory-bound kernels
// move `bytes` at memory_efficiency of HBM bandwidth. Kernel times are GPU
// times; the host's launch interval (kernel_overhead_s) is applied by the
// lowering's launch queue. All constants come from the cluster's
// GpuSpec::roofline.
//
// Immutable; safe to call from many threads.
class Roofline final : public CostModel {
 public:
  explicit Roofline(const Cluster& cluster);
  Roofline(const Cluster& cluster, CollectiveModel collectives);

  double kernel_time_s(const KernelDesc& kernel) const override;
  double collective_time_s(const CollectiveDesc& collective) const override;
  double launch_interval_s() const override { return constants_.kernel_overhead_s; }
  double microbatch_overhead_s() const override { return constants_.microbatch_overhead_s; }
  double iteration_overhead_s() const override { return constants_.iteration_overhead_s; }
  std::string describe() const override;

  // The GEMM efficiency factor (0, 1] the model applies to `shape`.
  double gemm_efficiency(const GemmShape& shape) const;
  const CollectiveModel& collectives() const { return collectives_; }

 private:
  GpuSpec gpu_;
  RooflineConstants constants_;
  CollectiveModel collectives_;
};

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_ROOFLINE_H_

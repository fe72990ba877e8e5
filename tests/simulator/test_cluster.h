// Small inline fixtures shared by the simulator tests.
#ifndef LLMPLAN_TESTS_SIMULATOR_TEST_CLUSTER_H_
#define LLMPLAN_TESTS_SIMULATOR_TEST_CLUSTER_H_

#include <gtest/gtest.h>

#include <initializer_list>
#include <mutex>
#include <string>
#include <vector>

#include "simulator/cluster.h"
#include "simulator/cost_model.h"
#include "simulator/lowering.h"
#include "simulator/precision.h"
#include "simulator/simulate.h"
#include "simulator/model.h"
#include "base/strict_json.h"
#include "tests/simulator/test_models.h"

namespace llmplan::simulator::testing {

// `text` parsed as JSON; a failed expectation (and null) when it is not.
inline boost::json::value parse_json(const std::string& text) {
  Result<boost::json::value> v = json::parse(text, "test");
  EXPECT_TRUE(v.ok()) << v.status().message();
  return v.ok() ? *v : boost::json::value();
}

// Records every kernel the lowering looks up; each costs 1 us.
class RecordingCost final : public CostModel {
 public:
  RecordingCost() = default;
  // `fp8_transpose`: what fp8_transpose_copy() answers (false: Blackwell).
  explicit RecordingCost(bool fp8_transpose) : fp8_transpose_(fp8_transpose) {}
  bool fp8_transpose_copy() const override { return fp8_transpose_; }
  double kernel_time_s(const KernelDesc& k) const override {
    std::lock_guard<std::mutex> lock(mu_);
    kernels_.push_back(k);
    return 1e-6;
  }
  double collective_time_s(const CollectiveDesc&) const override { return 0.0; }
  double microbatch_overhead_s() const override { return 0.0; }
  double iteration_overhead_s() const override { return 0.0; }
  std::string describe() const override { return "recording"; }
  std::vector<KernelDesc> kernels() const {
    std::lock_guard<std::mutex> lock(mu_);
    return kernels_;
  }

 private:
  bool fp8_transpose_ = true;
  mutable std::mutex mu_;
  mutable std::vector<KernelDesc> kernels_;
};

// An A100-80GB DGX cluster written out by hand (DESIGN.md section 9 figures).
inline Cluster a100_cluster() {
  Cluster c;
  c.name = "test-a100";
  c.gpu.name = "a100-test";
  c.gpu.peak_bf16_flops = 312e12;
  c.gpu.peak_fp16_flops = 312e12;
  c.gpu.hbm_bytes = 80e9;
  c.gpu.hbm_bytes_per_s = 2.039e12;
  c.gpu.nvlink_bytes_per_s = 600e9;
  c.gpu.tdp_w = 400;
  c.gpu.num_sms = 108;
  c.gpus_per_node = 8;
  c.nic_bytes_per_s = 25e9;
  return c;
}

// The A100 test cluster with its GPU renamed `name` and given other rates
// (set_gpu: dense BF16/FP16 and FP8 FLOP/s, HBM bandwidth, SM count).
inline Cluster a100_cluster_with(const std::string& name, double bf16_flops, double fp8_flops,
                                 double hbm_bytes_per_s, int num_sms) {
  Cluster c = a100_cluster();
  set_gpu(&c.gpu, name, bf16_flops, fp8_flops, hbm_bytes_per_s, num_sms);
  return c;
}

// The bytes of every FP8/NVFP4 cast of one pipeline chunk's layers (stage
// 0's), in lowering order: the forward pass's, then the backward's.
struct CastBytes {
  std::vector<double> forward, backward;
};
inline CastBytes cast_bytes_by_pass(const Model& model, const Plan& plan, const Cluster& cluster) {
  RecordingCost cost;
  lower_chunk(model, plan, place(plan, cluster), cost, 0);
  CastBytes out;
  for (const KernelDesc& k : cost.kernels()) {
    if (k.kind != KernelKind::kFp8CastTranspose) continue;
    (k.pass == Pass::kForward ? out.forward : out.backward).push_back(k.bytes);
  }
  return out;
}

// The step of `plan` in each of `precisions`, in order (a failed
// expectation, and an empty report, for one that does not simulate).
inline std::vector<StepReport> step_in_each(const Model& model, Plan plan, const Cluster& cluster,
                                            std::initializer_list<Precision> precisions) {
  std::vector<StepReport> out;
  for (Precision precision : precisions) {
    plan.precision = precision;
    Result<StepReport> r = simulate(model, plan, cluster);
    EXPECT_TRUE(r.ok()) << to_string(precision) << ": " << r.status().message();
    out.push_back(r.ok() ? *r : StepReport());
  }
  return out;
}

// Expects the linear GEMMs (QKV, output projection, FC1, FC2) and the FP8
// cast-transposes among `kernels` in `low`, every other kernel in bf16;
// returns how many linear GEMMs there are.
inline int expect_linear_gemms_in(Precision low, const std::vector<KernelDesc>& kernels) {
  int linear_gemms = 0;
  for (const KernelDesc& k : kernels) {
    const bool linear = k.kind == KernelKind::kQkvGemm || k.kind == KernelKind::kOutProjGemm ||
                        k.kind == KernelKind::kFc1Gemm || k.kind == KernelKind::kFc2Gemm;
    const bool in_low = linear || k.kind == KernelKind::kFp8CastTranspose;
    EXPECT_EQ(k.precision, in_low ? low : Precision::kBf16)
        << kernel_kind_name(k.kind) << " " << pass_name(k.pass);
    if (linear) ++linear_gemms;
  }
  return linear_gemms;
}

// A Llama-style dense model (SwiGLU, GQA, RMSNorm, untied) of `layers`
// layers, hidden 2048.
inline Model llama_like(int layers = 16) {
  Model m = modern_model("gpt-test", layers, 2048, 16, 5632, 4096, 32000);
  m.num_kv_heads = 4;
  return m;
}

// llama_like() with 16 routed experts of 1408, top-4.
inline Model moe_like() {
  Model m = llama_like();
  m.num_experts = 16;
  m.moe_top_k = 4;
  m.moe_ffn_hidden_size = 1408;
  return m;
}

// A cost model whose stages are exactly uniform: GEMMs cost their FLOPs at
// 1 PFLOP/s except the logits; every other kernel and every collective is
// free. Pipeline bubbles can then be checked against the textbook formulas.
class GemmOnlyCost final : public CostModel {
 public:
  double kernel_time_s(const KernelDesc& k) const override {
    if (!is_gemm(k.kind) || k.kind == KernelKind::kLogitsGemm) return 0.0;
    return k.flops / 1e15;
  }
  double collective_time_s(const CollectiveDesc&) const override { return 0.0; }
  double microbatch_overhead_s() const override { return 0.0; }
  double iteration_overhead_s() const override { return 0.0; }
  std::string describe() const override { return "gemm-only test model"; }
};

}  // namespace llmplan::simulator::testing

#endif  // LLMPLAN_TESTS_SIMULATOR_TEST_CLUSTER_H_

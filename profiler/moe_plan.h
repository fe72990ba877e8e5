// What `llmplan-profile --moe` measures: the kernels of a mixture-of-experts
// layer that the dense kernel set lacks — grouped expert GEMMs (SwiGLU
// experts as Megatron-Core runs them), the router (GEMM, score function +
// top-k) and token permutation / combine — over a grid of local expert
// counts and tokens per expert.
//
// The MoE measurements go to their own JSON file (kind
// "llmplan-moe-profile", moe_profile_json.h), not into the profile the
// simulator reads: the simulator's profile reader is strict and has no MoE
// keys yet. Plain C++ with no CUDA: `--list` prints the plan without a GPU
// and the tests cover it.
#ifndef LLMPLAN_PROFILER_MOE_PLAN_H_
#define LLMPLAN_PROFILER_MOE_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "profiler/moe_limits.h"
#include "simulator/cost_model.h"
#include "base/status.h"

namespace llmplan::profiler {

enum class RouterScore { kSoftmax, kSigmoid };

// One MoE layer's routing and expert shape.
struct MoeModel {
  int hidden = 0;
  int experts = 0;     // routed experts E
  int top_k = 0;       // experts per token k
  int expert_ffn = 0;  // f: FC1 is [h, 2f] (SwiGLU), FC2 [f, h]
  RouterScore score = RouterScore::kSoftmax;
  friend bool operator==(const MoeModel&, const MoeModel&) = default;
};

// The MoE grid. Grouped GEMMs: for every model, every local expert count e
// (E divisible by e, e <= E; the expert-parallel degree is E/e) and every
// tokens-per-expert m from m_sweep plus the balanced m = T*k/e of every T in
// `tokens`, as long as e*m <= max_rows. Router and permutation: every model
// at every T in `tokens` (tokens per rank and micro-batch).
struct MoeSettings {
  std::vector<MoeModel> models;
  std::vector<int> local_experts = {1, 2, 4, 8, 16, 32};
  std::vector<int> m_sweep = {16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};
  std::vector<int> tokens = {4096, 8192};
  int64_t max_rows = 65536;
};

// OK when every model has hidden, experts, top-k, expert FFN >= 1, top_k <=
// experts, experts <= kMaxRouterExperts, top_k <= kMaxRouterTopK, hidden a
// multiple of kPermuteHiddenMultiple, and the lists and max_rows are
// positive. InvalidArgument names the flag (--moe-hidden, ...) otherwise.
Status validate_moe_settings(const MoeSettings& s);

enum class MoeOp {
  kExpertFc1,   // [m, h] x [h, 2f] per local expert
  kExpertFc2,   // [m, f] x [f, h]
  kRouterGemm,  // [T, h] x [h, E]
  kRouterTopk,  // score function + top-k (+ normalisation) over [T, E]
  kPermute,     // gather T*k rows of width h into expert order
  kUnpermute,   // weighted combine of each token's k expert outputs
};

// How the grouped expert GEMMs are run (cuBLAS).
enum class GroupedImpl {
  kNone,            // not a grouped GEMM
  kStridedBatched,  // cublasGemmStridedBatchedEx: equal m per expert only
  kGroupedBatched,  // cublasGemmGroupedBatchedEx: one group per expert
  kLoop,            // one cublasGemmEx per expert (Megatron's SequentialMLP)
};

enum class TokenSplit { kBalanced, kSkewed };

// One MoE measurement. GEMM ops: per expert i the forward GEMM
// C[m_i, n] = A[m_i, k] B[k, n] (B row-major [k, n], as Megatron's
// GroupedMLP stores weights; tokens contiguous in expert order) and `pass`
// says which of the three GEMMs runs (fwd; bwd_data dA = dC B^T; bwd_weight
// dB = A^T dC). Router GEMM: m = T, k = h, n = E, weight stored [E, h].
// Memory-bound ops: `bytes` by the convention in profiler/README.md.
struct MoeJob {
  MoeOp op = MoeOp::kExpertFc1;
  simulator::Pass pass = simulator::Pass::kForward;
  GroupedImpl impl = GroupedImpl::kNone;
  TokenSplit split = TokenSplit::kBalanced;
  MoeModel model;
  int64_t local_experts = 1;
  int64_t m = 0, n = 0, k = 0;    // GEMMs; m is the mean tokens per expert
  std::vector<int64_t> expert_m;  // grouped GEMMs: tokens of each local expert
  int64_t tokens = 0;             // router / permutation: T
  double flops = 0;
  double bytes = 0;

  // Same measurement (the model fields that matter for the op, and the
  // geometry); used to drop duplicates.
  bool same_key(const MoeJob& o) const;
};

// Tokens per expert with total e*m, skewed: m_i = m*(2i+1)/e rounded to the
// nearest multiple of 16, the difference added to the last expert (so
// max/mean is about 2; torch._grouped_mm's weight gradient needs 16-aligned
// group boundaries, and the reference script uses the same split).
// REQUIRES: e >= 1, m >= 0, m % 16 == 0.
std::vector<int64_t> skewed_split(int64_t m, int64_t e);

// Every job of the grid, duplicates removed, in a fixed order: per model,
// grouped GEMMs by e, m, FC1/FC2, pass, implementation; then router and
// permutation jobs by T. REQUIRES: validate_moe_settings(s).ok().
std::vector<MoeJob> plan_moe_jobs(const MoeSettings& s);

// Names used in --list, stderr and the JSON.
const char* moe_op_name(MoeOp op);
const char* grouped_impl_name(GroupedImpl impl);
const char* token_split_name(TokenSplit split);
const char* router_score_name(RouterScore score);
// e.g. "expert_fc1 bwd_weight grouped_batched skewed e=8 m=512 n=3072 k=2048".
std::string describe_moe_job(const MoeJob& job);

// The text `llmplan-profile --moe --list` prints: models, grid, one line per job.
std::string format_moe_plan(const MoeSettings& s, const std::vector<MoeJob>& jobs);

}  // namespace llmplan::profiler

#endif  // LLMPLAN_PROFILER_MOE_PLAN_H_

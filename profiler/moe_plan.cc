#include "profiler/moe_plan.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "base/name_table.h"

namespace llmplan::profiler {
namespace {

using simulator::Pass;

constexpr Pass kGemmPasses[] = {Pass::kForward, Pass::kBackwardData, Pass::kBackwardWeight};
constexpr double kBf16Bytes = 2;

Status positive_list(const std::vector<int>& v, const char* flag) {
  if (v.empty()) return Status::invalid_argument(std::string(flag) + ": give at least one value");
  for (int x : v) {
    if (x < 1) {
      return Status::invalid_argument(std::string(flag) + ": values must be >= 1, not " +
                                      std::to_string(x));
    }
  }
  return Status();
}

// The m values of local expert count e: the sweep plus the balanced m of
// every T, those with e*m <= max_rows, sorted.
std::vector<int64_t> m_values(const MoeSettings& s, const MoeModel& model, int64_t e) {
  std::set<int64_t> ms;
  for (int m : s.m_sweep) {
    if (e * m <= s.max_rows) ms.insert(m);
  }
  for (int t : s.tokens) {
    const int64_t routed = static_cast<int64_t>(t) * model.top_k;
    if (routed % e == 0 && routed <= s.max_rows) ms.insert(routed / e);
  }
  return {ms.begin(), ms.end()};
}

void add_grouped_gemms(const MoeModel& model, int64_t e, int64_t m, std::vector<MoeJob>* out) {
  struct Gemm {
    MoeOp op;
    int64_t k, n;
  };
  const Gemm gemms[] = {{MoeOp::kExpertFc1, model.hidden, 2 * int64_t{model.expert_ffn}},
                        {MoeOp::kExpertFc2, model.expert_ffn, model.hidden}};
  const bool skew = e >= 2 && m % 16 == 0;
  for (const Gemm& g : gemms) {
    for (Pass pass : kGemmPasses) {
      MoeJob j;
      j.op = g.op;
      j.pass = pass;
      j.model = model;
      j.local_experts = e;
      j.m = m;
      j.n = g.n;
      j.k = g.k;
      j.flops = 2.0 * static_cast<double>(e * m) * static_cast<double>(g.n * g.k);
      j.expert_m.assign(static_cast<size_t>(e), m);
      j.impl = GroupedImpl::kStridedBatched;
      out->push_back(j);
      j.impl = GroupedImpl::kGroupedBatched;
      out->push_back(j);
      if (!skew) continue;
      j.split = TokenSplit::kSkewed;
      j.expert_m = skewed_split(m, e);
      out->push_back(j);
      j.impl = GroupedImpl::kLoop;
      out->push_back(j);
    }
  }
}

void add_routing(const MoeModel& model, int64_t t, std::vector<MoeJob>* out) {
  MoeJob j;
  j.model = model;
  j.tokens = t;
  const double h = model.hidden, e = model.experts, k = model.top_k, tk = t * k;
  j.op = MoeOp::kRouterGemm;
  j.m = t;
  j.k = model.hidden;
  j.n = model.experts;
  j.flops = 2.0 * static_cast<double>(t) * h * e;
  for (Pass pass : kGemmPasses) {
    j.pass = pass;
    out->push_back(j);
  }
  j.m = j.n = j.k = 0;
  j.flops = 0;
  // bf16 logits in; fp32 weights and int32 indices out; the backward reads
  // the logits, weights' gradient and indices and writes the logits' gradient.
  j.op = MoeOp::kRouterTopk;
  j.pass = Pass::kForward;
  j.bytes = static_cast<double>(t) * e * kBf16Bytes + tk * 8;
  out->push_back(j);
  j.pass = Pass::kBackward;
  j.bytes = 2.0 * static_cast<double>(t) * e * kBf16Bytes + tk * 8;
  out->push_back(j);
  // Rows of width h: the permuted tensor has T*k, the token tensor T.
  const double routed = tk * h * kBf16Bytes, token = static_cast<double>(t) * h * kBf16Bytes;
  j.op = MoeOp::kPermute;
  j.pass = Pass::kForward;
  j.bytes = 2 * routed;  // gather: read and write T*k rows
  out->push_back(j);
  j.pass = Pass::kBackward;
  j.bytes = routed + token;  // sum each token's k rows
  out->push_back(j);
  j.op = MoeOp::kUnpermute;
  j.pass = Pass::kForward;
  j.bytes = routed + token;  // weighted sum of k rows per token
  out->push_back(j);
  j.pass = Pass::kBackward;
  j.bytes = token + 2 * routed;  // read dy and the expert outputs, write their gradient
  out->push_back(j);
}

}  // namespace

Status validate_moe_settings(const MoeSettings& s) {
  if (s.models.empty()) return Status::invalid_argument("--moe-hidden: required with --moe");
  for (const MoeModel& m : s.models) {
    if (m.hidden < 1 || m.experts < 1 || m.top_k < 1 || m.expert_ffn < 1) {
      return Status::invalid_argument(
          "--moe-hidden, --moe-experts, --moe-top-k, --moe-expert-ffn: values must be >= 1");
    }
    if (m.top_k > m.experts) {
      return Status::invalid_argument("--moe-top-k: " + std::to_string(m.top_k) +
                                      " exceeds --moe-experts " + std::to_string(m.experts));
    }
    if (m.experts > kMaxRouterExperts || m.top_k > kMaxRouterTopK) {
      return Status::invalid_argument(
          "--moe-experts/--moe-top-k: the routing kernel handles at most " +
          std::to_string(kMaxRouterExperts) + " experts and top-" + std::to_string(kMaxRouterTopK));
    }
    if (m.hidden % kPermuteHiddenMultiple != 0) {
      return Status::invalid_argument("--moe-hidden: " + std::to_string(m.hidden) +
                                      " is not a multiple of " +
                                      std::to_string(kPermuteHiddenMultiple));
    }
  }
  LLMPLAN_RETURN_IF_ERROR(positive_list(s.local_experts, "--moe-local-experts"));
  LLMPLAN_RETURN_IF_ERROR(positive_list(s.m_sweep, "--moe-m"));
  LLMPLAN_RETURN_IF_ERROR(positive_list(s.tokens, "--moe-tokens"));
  if (s.max_rows < 1) return Status::invalid_argument("--moe-max-rows: must be >= 1");
  return Status();
}

std::vector<int64_t> skewed_split(int64_t m, int64_t e) {
  std::vector<int64_t> out(static_cast<size_t>(e));
  int64_t sum = 0;
  for (int64_t i = 0; i < e; ++i) {
    out[static_cast<size_t>(i)] = (m * (2 * i + 1) + e * 8) / (e * 16) * 16;
    sum += out[static_cast<size_t>(i)];
  }
  out.back() += e * m - sum;
  return out;
}

bool MoeJob::same_key(const MoeJob& o) const {
  if (op != o.op || pass != o.pass || impl != o.impl || split != o.split) return false;
  switch (op) {
    case MoeOp::kExpertFc1:
    case MoeOp::kExpertFc2:
      return local_experts == o.local_experts && m == o.m && n == o.n && k == o.k;
    case MoeOp::kRouterGemm:
      return m == o.m && n == o.n && k == o.k;
    case MoeOp::kRouterTopk:
      return tokens == o.tokens && model.experts == o.model.experts &&
             model.top_k == o.model.top_k && model.score == o.model.score;
    case MoeOp::kPermute:
    case MoeOp::kUnpermute:
      return tokens == o.tokens && model.top_k == o.model.top_k && model.hidden == o.model.hidden;
  }
  return false;
}

std::vector<MoeJob> plan_moe_jobs(const MoeSettings& s) {
  std::vector<MoeJob> all;
  for (const MoeModel& model : s.models) {
    for (int e : s.local_experts) {
      if (e > model.experts || model.experts % e != 0) continue;
      for (int64_t m : m_values(s, model, e)) add_grouped_gemms(model, e, m, &all);
    }
    for (int t : s.tokens) add_routing(model, t, &all);
  }
  std::vector<MoeJob> out;
  for (MoeJob& j : all) {
    const bool seen =
        std::any_of(out.begin(), out.end(), [&](const MoeJob& o) { return o.same_key(j); });
    if (!seen) out.push_back(std::move(j));
  }
  return out;
}

const char* moe_op_name(MoeOp op) {
  static constexpr Named<MoeOp> kNames[] = {
      {"expert_fc1", MoeOp::kExpertFc1},   {"expert_fc2", MoeOp::kExpertFc2},
      {"router_gemm", MoeOp::kRouterGemm}, {"router_topk", MoeOp::kRouterTopk},
      {"permute", MoeOp::kPermute},        {"unpermute", MoeOp::kUnpermute},
  };
  return name_in(kNames, op);
}

const char* grouped_impl_name(GroupedImpl impl) {
  static constexpr Named<GroupedImpl> kNames[] = {
      {"none", GroupedImpl::kNone},
      {"strided_batched", GroupedImpl::kStridedBatched},
      {"grouped_batched", GroupedImpl::kGroupedBatched},
      {"loop", GroupedImpl::kLoop},
  };
  return name_in(kNames, impl);
}

const char* token_split_name(TokenSplit split) {
  return split == TokenSplit::kBalanced ? "balanced" : "skewed";
}

const char* router_score_name(RouterScore score) {
  return score == RouterScore::kSoftmax ? "softmax" : "sigmoid";
}

std::string describe_moe_job(const MoeJob& j) {
  char buf[256];
  const char* op = moe_op_name(j.op);
  const char* pass = simulator::pass_name(j.pass);
  switch (j.op) {
    case MoeOp::kExpertFc1:
    case MoeOp::kExpertFc2:
      std::snprintf(buf, sizeof buf, "%s %s %s %s e=%lld m=%lld n=%lld k=%lld", op, pass,
                    grouped_impl_name(j.impl), token_split_name(j.split),
                    static_cast<long long>(j.local_experts), static_cast<long long>(j.m),
                    static_cast<long long>(j.n), static_cast<long long>(j.k));
      break;
    case MoeOp::kRouterGemm:
      std::snprintf(buf, sizeof buf, "%s %s m=%lld n=%lld k=%lld", op, pass,
                    static_cast<long long>(j.m), static_cast<long long>(j.n),
                    static_cast<long long>(j.k));
      break;
    case MoeOp::kRouterTopk:
      std::snprintf(buf, sizeof buf, "%s %s %s T=%lld E=%d k=%d", op, pass,
                    router_score_name(j.model.score), static_cast<long long>(j.tokens),
                    j.model.experts, j.model.top_k);
      break;
    case MoeOp::kPermute:
    case MoeOp::kUnpermute:
      std::snprintf(buf, sizeof buf, "%s %s T=%lld k=%d h=%d", op, pass,
                    static_cast<long long>(j.tokens), j.model.top_k, j.model.hidden);
      break;
  }
  return buf;
}

std::string format_moe_plan(const MoeSettings& s, const std::vector<MoeJob>& jobs) {
  std::string out = "MoE models (" + std::to_string(s.models.size()) + "):\n";
  for (const MoeModel& m : s.models) {
    out += "  h=" + std::to_string(m.hidden) + " E=" + std::to_string(m.experts) +
           " k=" + std::to_string(m.top_k) + " f=" + std::to_string(m.expert_ffn) + " " +
           router_score_name(m.score) + "\n";
  }
  auto join = [](const std::vector<int>& v) {
    std::string r;
    for (int x : v) r += (r.empty() ? "" : ",") + std::to_string(x);
    return r;
  };
  out += "local experts " + join(s.local_experts) + "; m " + join(s.m_sweep) + "; tokens " +
         join(s.tokens) + "; at most " + std::to_string(s.max_rows) + " rows per grouped GEMM\n";
  out += "MoE kernels (" + std::to_string(jobs.size()) + "):\n";
  for (const MoeJob& j : jobs) out += "  " + describe_moe_job(j) + "\n";
  return out;
}

}  // namespace llmplan::profiler

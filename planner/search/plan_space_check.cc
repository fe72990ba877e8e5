// Checking a plan space against the limits, a model and a cluster, and
// describing it (plan_space.h's validate, check_against_model,
// check_against_cluster, fixed_axes and describe).
#include "planner/search/plan_space.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "reports/format.h"

namespace llmplan::planner {

using simulator::Model;
using simulator::Plan;
using simulator::Recompute;

Status validate(const PlanSpace& s) {
  auto sizes = [](const std::vector<int>& list, const char* flag, int max) -> Status {
    for (int x : list) {
      if (x < 1 || x > max) {
        return Status::invalid_argument(fmt::format("{}: {} is not a size in [1, {}]", flag, x, max));
      }
    }
    return Status();
  };
  LLMPLAN_RETURN_IF_ERROR(sizes(s.tp, "--tp", Plan::kMaxGpus));
  LLMPLAN_RETURN_IF_ERROR(sizes(s.pp, "--pp", Plan::kMaxGpus));
  LLMPLAN_RETURN_IF_ERROR(sizes(s.context_parallel, "--cp", Plan::kMaxGpus));
  LLMPLAN_RETURN_IF_ERROR(sizes(s.micro_batch, "--micro-batch", Plan::kMaxGlobalBatch));
  LLMPLAN_RETURN_IF_ERROR(sizes(s.virtual_stages, "--virtual-stages", Model::kMaxLayers));
  LLMPLAN_RETURN_IF_ERROR(sizes(s.global_batch, "--global-batch", Plan::kMaxGlobalBatch));
  for (double x : s.global_batch_tokens) {
    // Bound: the most sequences times the longest context.
    if (!(x >= 1) || !(x <= static_cast<double>(Plan::kMaxGlobalBatch) * Model::kMaxSeqLength)) {
      return Status::invalid_argument(
          fmt::format("--global-batch-tokens: {} is not a positive token count (at most 2^44)", x));
    }
  }
  if (!s.global_batch.empty() && !s.global_batch_tokens.empty()) {
    return Status::invalid_argument(
        "--global-batch and --global-batch-tokens: give one of them (sequences or tokens)");
  }
  for (simulator::Schedule x : s.schedule) {
    if (x != simulator::Schedule::kOneFOneB && x != simulator::Schedule::kZbH1) {
      return Status::invalid_argument(fmt::format(
          "--schedule: {} is not a schedule of pipelines without interleaving (1f1b, zb-h1)",
          simulator::to_string(x)));
    }
  }
  for (int z : s.zero_stage) {
    if (z < 0 || z > 3) {
      return Status::invalid_argument(fmt::format("--zero: {} is not a ZeRO stage (0, 1, 2 or 3)", z));
    }
  }
  if (!s.zero_stage.empty() && s.distributed_optimizer != Choice::kAuto) {
    return Status::invalid_argument(
        "--zero and --distributed-optimizer: give one of them (the distributed optimizer is ZeRO "
        "stage 1)");
  }
  LLMPLAN_RETURN_IF_ERROR(sizes(s.fsdp_group, "--fsdp-group", Plan::kMaxGpus));
  LLMPLAN_RETURN_IF_ERROR(sizes(s.expert_parallel, "--ep", Plan::kMaxGpus));
  if (s.max_model_parallel < 0) {
    return Status::invalid_argument("--max-model-parallel: must be >= 0 (0: no limit)");
  }
  return Status();
}

Status check_against_model(const PlanSpace& s, const Model& m) {
  if (!s.tp.empty() &&
      std::none_of(s.tp.begin(), s.tp.end(), [&](int t) {
        return m.num_heads % t == 0 && m.kv_heads() % t == 0 && m.ffn_hidden() % t == 0;
      })) {
    return Status::invalid_argument(fmt::format(
        "--tp {}: no value divides {}'s {} heads, {} KV heads and FFN size {}",
        fmt::join(s.tp, ","), m.name, m.num_heads, m.kv_heads(), m.ffn_hidden()));
  }
  // Sequence parallelism on (automatic: on when t > 1) splits the sequence t ways.
  const bool sp_always = s.sequence_parallel == Choice::kAuto || s.sequence_parallel == Choice::kOn;
  if (!s.tp.empty() && sp_always &&
      std::none_of(s.tp.begin(), s.tp.end(), [&](int t) {
        return m.num_heads % t == 0 && m.kv_heads() % t == 0 && m.ffn_hidden() % t == 0 &&
               (t == 1 || m.seq_length % t == 0);
      })) {
    return Status::invalid_argument(fmt::format(
        "--tp {}: sequence parallelism (on with t > 1) splits {}'s sequence of {} tokens t "
        "ways, and no value that divides its heads divides it (--sequence-parallel both "
        "also tries it off)",
        fmt::join(s.tp, ","), m.name, m.seq_length));
  }
  if (!s.context_parallel.empty() &&
      std::none_of(s.context_parallel.begin(), s.context_parallel.end(),
                   [&](int cp) { return m.seq_length % (2 * static_cast<long>(cp)) == 0; })) {
    return Status::invalid_argument(fmt::format(
        "--cp {}: no value splits {}'s sequence of {} tokens into 2 * cp equal chunks",
        fmt::join(s.context_parallel, ","), m.name, m.seq_length));
  }
  if (!s.pp.empty() &&
      std::none_of(s.pp.begin(), s.pp.end(), [&](int p) { return p <= m.num_layers; })) {
    return Status::invalid_argument(fmt::format("--pp {}: every value exceeds {}'s {} layers",
                                                fmt::join(s.pp, ","), m.name, m.num_layers));
  }
  if (!s.expert_parallel.empty()) {
    if (!m.is_moe() && std::none_of(s.expert_parallel.begin(), s.expert_parallel.end(),
                                    [](int ep) { return ep == 1; })) {
      return Status::invalid_argument(fmt::format(
          "--ep {}: {} is a dense model (no experts); expert parallelism needs an MoE model",
          fmt::join(s.expert_parallel, ","), m.name));
    }
    if (m.is_moe() && std::none_of(s.expert_parallel.begin(), s.expert_parallel.end(),
                                   [&](int ep) { return m.num_experts % ep == 0; })) {
      return Status::invalid_argument(fmt::format("--ep {}: no value divides the {} experts of {}",
                                                  fmt::join(s.expert_parallel, ","),
                                                  m.num_experts, m.name));
    }
  }
  if (s.max_model_parallel > 0 && !s.tp.empty() && !s.pp.empty()) {
    const int tmin = *std::min_element(s.tp.begin(), s.tp.end());
    const int pmin = *std::min_element(s.pp.begin(), s.pp.end());
    if (static_cast<long>(tmin) * pmin > s.max_model_parallel) {
      return Status::invalid_argument(fmt::format(
          "--max-model-parallel {}: smaller than the smallest --tp x --pp ({} x {})",
          s.max_model_parallel, tmin, pmin));
    }
  }
  return Status();
}

Status check_against_cluster(const PlanSpace& s, const simulator::Cluster& c, int gpus) {
  if (!s.precision.empty() && precisions_for(s, c.gpu).empty()) {
    const bool fp8_listed =
        std::find(s.precision.begin(), s.precision.end(), simulator::Precision::kFp8) !=
        s.precision.end();
    if (!fp8_listed) {  // then nvfp4 was listed, and dropped
      return Status::invalid_argument(fmt::format(
          "--precision nvfp4: GPU {} has no FP4 tensor cores (its preset has no "
          "peak_fp4_flops); use --precision bf16 or fp8, or a Blackwell GPU such as b200",
          c.gpu.name));
    }
    if (!(c.gpu.peak_fp8_flops > 0)) {
      return Status::invalid_argument(fmt::format(
          "--precision fp8: GPU {} has no FP8 tensor cores (its preset has no peak_fp8_flops); "
          "use --precision bf16, or an FP8 GPU such as h100-sxm",
          c.gpu.name));
    }
    return Status::invalid_argument(fmt::format(
        "--fp8-recipe mxfp8: GPU {} has no FP8 block scaling (MXFP8 needs Blackwell); use "
        "--fp8-recipe delayed or current",
        c.gpu.name));
  }
  if (!s.tp.empty() && std::none_of(s.tp.begin(), s.tp.end(), [&](int t) {
        return c.nvlink_domain() % t == 0 && (gpus <= 0 || t <= gpus);
      })) {
    return Status::invalid_argument(fmt::format(
        "--tp {}: no value forms a tensor-parallel group within an NVLink domain: a size must "
        "divide the {} GPUs per NVLink domain of {} (and be at most --gpus {})",
        fmt::join(s.tp, ","), c.nvlink_domain(), c.name, gpus));
  }
  return Status();
}

std::string fixed_axes(const PlanSpace& s) {
  std::vector<std::string> out;
  auto ints = [&](const char* flag, const std::vector<int>& v) {
    if (!v.empty()) out.push_back(fmt::format("{} {}", flag, fmt::join(v, ",")));
  };
  auto choice = [&](const char* flag, Choice ch) {
    if (ch != Choice::kAuto) out.push_back(fmt::format("{} {}", flag, to_string(ch)));
  };
  ints("--global-batch", s.global_batch);
  if (!s.global_batch_tokens.empty()) {
    std::vector<std::string> parts;
    for (double t : s.global_batch_tokens) parts.push_back(fmt::format("{}", t));
    out.push_back(fmt::format("--global-batch-tokens {}", fmt::join(parts, ",")));
  }
  ints("--tp", s.tp);
  ints("--pp", s.pp);
  ints("--cp", s.context_parallel);
  ints("--micro-batch", s.micro_batch);
  ints("--virtual-stages", s.virtual_stages);
  if (!s.recompute.empty()) {
    std::vector<std::string> rc;
    for (Recompute r : s.recompute) rc.push_back(simulator::to_string(r));
    out.push_back(fmt::format("--recompute {}", fmt::join(rc, ",")));
  }
  choice("--sequence-parallel", s.sequence_parallel);
  choice("--distributed-optimizer", s.distributed_optimizer);
  ints("--zero", s.zero_stage);
  ints("--fsdp-group", s.fsdp_group);
  if (!s.precision.empty()) {
    std::vector<std::string> ps;
    for (simulator::Precision p : s.precision) ps.push_back(simulator::to_string(p));
    out.push_back(fmt::format("--precision {}", fmt::join(ps, ",")));
  }
  ints("--ep", s.expert_parallel);
  if (s.max_model_parallel > 0) out.push_back(fmt::format("--max-model-parallel {}", s.max_model_parallel));
  return fmt::format("{}", fmt::join(out, " "));
}

std::string describe(const PlanSpace& s) {
  auto list = [](const std::vector<int>& v) {
    return v.empty() ? std::string("auto") : fmt::format("{}", fmt::join(v, ","));
  };
  std::string batch;
  if (!s.global_batch.empty()) {
    batch = fmt::format("{} sequences", fmt::join(s.global_batch, ","));
  } else if (!s.global_batch_tokens.empty()) {
    std::vector<std::string> parts;
    for (double t : s.global_batch_tokens) parts.push_back(reports::count_human(t));
    batch = fmt::format("{} tokens", fmt::join(parts, ","));
  } else {
    batch = "ladder 1M..64M tokens (Llama 3 405B: 16M; DeepSeek-V3: 63M), per model up to the "
            "compute-optimal batch (DeepSeek LLM: 0.292 C^0.3271, rounded up to a rung)";
  }
  std::vector<std::string> rc;
  for (Recompute r : s.recompute) rc.push_back(simulator::to_string(r));
  std::vector<std::string> precisions;
  for (simulator::Precision p : s.precision) precisions.push_back(simulator::to_string(p));
  std::string precision = precisions.empty() ? std::string("auto (bf16, and fp8 where the GPU has it)")
                                             : fmt::format("{}", fmt::join(precisions, ","));
  const bool fp8_listed = precisions.empty() || std::find(s.precision.begin(), s.precision.end(),
                                                          simulator::Precision::kFp8) != s.precision.end();
  if (fp8_listed) precision += fmt::format(" (fp8: {} scaling)", simulator::to_string(s.fp8_recipe));
  std::vector<std::string> schedule_names;
  for (simulator::Schedule x : s.schedule.empty() ? kAutoSchedules : s.schedule) {
    schedule_names.push_back(simulator::to_string(x));
  }
  const std::string schedules = fmt::format("{}{} (v = 1; interleaved when v > 1)",
                                            s.schedule.empty() ? "auto " : "",
                                            fmt::join(schedule_names, ","));
  return fmt::format(
      "global batch {}; tp {}; pp {}; cp {}; micro-batch {}; virtual stages {}; schedule {}; "
      "recompute {}; "
      "sequence parallel {}; distributed optimizer {}; ZeRO stage {}; FSDP group {}; "
      "TP comm overlap {}; grad-reduce overlap {}; param-gather overlap {}; "
      "precision {}; ep {}; MoE a2a overlap {}; max model parallel {}{}",
      batch, list(s.tp), list(s.pp),
      s.context_parallel.empty() ? std::string("auto (1; beyond 8192 tokens also 2,4,8)")
                                 : list(s.context_parallel),
      list(s.micro_batch), list(s.virtual_stages), schedules,
      rc.empty() ? std::string("auto (none, full if none does not fit)") : fmt::format("{}", fmt::join(rc, ",")),
      to_string(s.sequence_parallel), to_string(s.distributed_optimizer),
      s.zero_stage.empty() ? std::string("auto (1 when d > 1, or as --distributed-optimizer)")
                           : fmt::format("{}", fmt::join(s.zero_stage, ",")),
      s.fsdp_group.empty() ? std::string("whole data-parallel group")
                           : fmt::format("{}", fmt::join(s.fsdp_group, ",")),
      s.tp_comm_overlap == Choice::kAuto ? std::string("auto (on when t > 1 with SP)")
                                         : std::string(to_string(s.tp_comm_overlap)),
      s.overlap_grad_reduce == Choice::kAuto ? std::string("auto (on)")
                                             : std::string(to_string(s.overlap_grad_reduce)),
      s.overlap_param_gather == Choice::kAuto ? std::string("auto (on when sharded)")
                                              : std::string(to_string(s.overlap_param_gather)),
      precision,
      s.expert_parallel.empty()
          ? fmt::format("auto (MoE models: the largest power of two dividing the experts and t x cp "
                        "x d within a node, and up to {} across nodes; dense: 1)",
                        kMaxAutoExpertParallel)
          : list(s.expert_parallel),
      s.moe_a2a_overlap == Choice::kAuto ? std::string("auto (off and on where ep > 1)")
                                         : std::string(to_string(s.moe_a2a_overlap)),
      s.max_model_parallel > 0 ? std::to_string(s.max_model_parallel) : std::string("none"),
      s.all_gpus_only ? "; all GPUs only" : "");
}

}  // namespace llmplan::planner

#include "planner/cli/plan_space_flags.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>

#include "planner/cli/command.h"

namespace llmplan::planner {
namespace {

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

Status empty_list(const std::string& flag) {
  return Status::invalid_argument(flag + ": empty list (give comma-separated values)");
}

}  // namespace

Result<std::vector<int>> parse_int_list(const std::string& text, const std::string& flag, int max) {
  if (text.empty()) return empty_list(flag);
  std::vector<int> out;
  for (const std::string& item : split(text)) {
    if (item.empty()) return Status::invalid_argument(flag + ": empty item in '" + text + "'");
    long value = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (ec != std::errc() || end != item.data() + item.size() || value < 1 || value > max) {
      return Status::invalid_argument(flag + ": must be an integer from 1 to " + std::to_string(max) +
                                      ", got " + item);
    }
    if (std::find(out.begin(), out.end(), static_cast<int>(value)) != out.end()) {
      return Status::invalid_argument(flag + ": " + item + " is listed twice");
    }
    out.push_back(static_cast<int>(value));
  }
  return out;
}

Result<std::vector<double>> parse_tokens_list(const std::string& text, const std::string& flag) {
  if (text.empty()) return empty_list(flag);
  std::vector<double> out;
  for (std::string item : split(text)) {
    if (item.empty()) return Status::invalid_argument(flag + ": empty item in '" + text + "'");
    double scale = 1;
    const char last = item.back();
    if (last == 'K' || last == 'k') scale = 1024.0;
    if (last == 'M' || last == 'm') scale = 1024.0 * 1024.0;
    if (last == 'G' || last == 'g') scale = 1024.0 * 1024.0 * 1024.0;
    if (scale != 1) item.pop_back();
    double value = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() ||
        !std::isfinite(value) || !(value > 0)) {
      return Status::invalid_argument(flag + ": '" + item + "' is not a positive token count "
                                      "(e.g. 4194304 or 4M)");
    }
    out.push_back(value * scale);
  }
  return out;
}

void add_plan_space_flags(CLI::App* cmd, PlanSpaceFlags* f, const std::string& what) {
  const size_t before = cmd->get_options().size();
  cmd->add_option("--global-batch-tokens", f->global_batch_tokens,
                  what + ": global batch sizes in tokens, e.g. 2M,4M,8M (default: a ladder 1M..64M)");
  cmd->add_option("--global-batch", f->global_batch,
                  what + ": global batch sizes in sequences, e.g. 1024,2048");
  cmd->add_option("--tp", f->tp, what + ": tensor-parallel sizes, e.g. 4,8");
  cmd->add_option("--pp", f->pp, what + ": pipeline-parallel sizes, e.g. 1,2,4,8");
  cmd->add_option("--cp", f->cp,
                  what + ": context-parallel sizes, e.g. 1,2,4 (default: 1; for sequences "
                         "longer than 8192 tokens also 2, 4, 8 where 2 x cp divides them)");
  cmd->add_option("--micro-batch", f->micro_batch, what + ": micro-batch sizes (sequences), e.g. 1,2");
  cmd->add_option("--virtual-stages", f->virtual_stages,
                  what + ": interleaved virtual stages per pipeline rank, e.g. 1,2,4");
  cmd->add_option("--schedule", f->schedule,
                  what + ": pipeline schedules for p > 1 without interleaving, a list of 1f1b, "
                         "zb-h1 (default: 1f1b,zb-h1, zero-bubble ZB-H1 beside 1F1B; 1f1b for 1F1B only)");
  cmd->add_option("--recompute", f->recompute,
                  what + ": activation recomputation, a list of none, selective, full");
  cmd->add_option("--sequence-parallel", f->sequence_parallel, what + ": on, off or both")
      ->check(CLI::IsMember({"on", "off", "both"}));
  cmd->add_option("--distributed-optimizer", f->distributed_optimizer,
                  what + ": ZeRO-1 optimizer sharding: on, off or both")
      ->check(CLI::IsMember({"on", "off", "both"}));
  cmd->add_option("--zero", f->zero,
                  what + ": ZeRO stages, a list of 0 (none), 1 (optimizer state; the distributed "
                         "optimizer), 2 (+ gradients), 3 (+ parameters, FSDP)");
  cmd->add_option("--fsdp-group", f->fsdp_group,
                  what + ": hybrid-sharding group sizes (shard within S data-parallel ranks, "
                         "replicate across), e.g. 8,16");
  cmd->add_option("--tp-comm-overlap", f->tp_comm_overlap,
                  what + ": tensor-parallel communication overlapped with GEMMs: on, off or both")
      ->check(CLI::IsMember({"on", "off", "both"}));
  cmd->add_option("--overlap-grad-reduce", f->overlap_grad_reduce,
                  what + ": gradient reduction overlapped with backward: on, off or both")
      ->check(CLI::IsMember({"on", "off", "both"}));
  cmd->add_option("--overlap-param-gather", f->overlap_param_gather,
                  what + ": parameter all-gather overlapped with forward: on, off or both")
      ->check(CLI::IsMember({"on", "off", "both"}));
  cmd->add_option("--precision", f->precision,
                  what + ": training precisions, a list of bf16, fp16, fp8, nvfp4 (default: "
                         "bf16, and fp8 where the GPU has FP8 tensor cores; listed fp8 or nvfp4 "
                         "is skipped on a GPU without it)");
  cmd->add_option("--fp8-recipe", f->fp8_recipe,
                  what + ": FP8 scaling recipe of the fp8 plans: delayed (default), current, "
                         "mxfp8 (Blackwell)")
      ->check(CLI::IsMember(simulator::fp8_recipe_names()));
  cmd->add_option("--ep", f->ep,
                  what + ": expert-parallel sizes for MoE models, e.g. 8,32 (default: per layout the "
                         "largest power of two dividing the experts and t x cp x d within an NVLink "
                         "domain, and up to 64 across domains)");
  cmd->add_option("--moe-a2a-overlap", f->moe_a2a_overlap,
                  what + ": MoE dispatch/combine all-to-all overlapped with compute: on, off or "
                         "both (default: both where ep > 1)")
      ->check(CLI::IsMember({"on", "off", "both"}));
  cmd->add_option("--max-model-parallel", f->max_model_parallel,
                  what + ": most GPUs per model replica (t x p); 0: no limit")
      ->check(int_in(0, simulator::Plan::kMaxGpus));
  // Record which were given (an empty value included) while parsing: the
  // options themselves may be gone when to_plan_space() runs.
  const std::vector<CLI::Option*> all = cmd->get_options();
  for (size_t i = before; i < all.size(); ++i) {
    const std::string name = all[i]->get_name();
    all[i]->each([f, name](const std::string&) { f->given.insert(name); });
  }
}

namespace {

// Whether list flag `name` was given (as "" too: an empty list, an error).
bool list_given(const PlanSpaceFlags& f, const char* name, const std::string& value) {
  return !value.empty() || f.given.count(name) > 0;
}

// A comma-separated list of distinct items, each read by `parse` (whose
// error names the item), into *out; "" is an empty list (an error).
template <typename T, typename Parse>
Status parse_unique_list(const std::string& text, const char* flag, Parse parse,
                         std::vector<T>* out) {
  if (text.empty()) return empty_list(flag);
  for (const std::string& item : split(text)) {
    LLMPLAN_ASSIGN_OR_RETURN(const T x, parse(item));
    if (std::find(out->begin(), out->end(), x) != out->end()) {
      return Status::invalid_argument(std::string(flag) + ": " + item + " is listed twice");
    }
    out->push_back(x);
  }
  return Status();
}

Result<simulator::Schedule> parse_schedule_item(const std::string& item) {
  if (item == "1f1b") return simulator::Schedule::kOneFOneB;
  if (item == "zb-h1") return simulator::Schedule::kZbH1;
  return Status::invalid_argument("--schedule: '" + item +
                                  "' is not one of 1f1b, zb-h1 (interleaving: --virtual-stages)");
}

Result<simulator::Recompute> parse_recompute_item(const std::string& item) {
  if (item == "none") return simulator::Recompute::kNone;
  if (item == "selective") return simulator::Recompute::kSelective;
  if (item == "full") return simulator::Recompute::kFull;
  return Status::invalid_argument("--recompute: '" + item + "' is not one of none, selective, full");
}

Result<int> parse_zero_item(const std::string& item) {
  if (item.size() != 1 || item[0] < '0' || item[0] > '3') {
    return Status::invalid_argument("--zero: '" + item + "' is not a ZeRO stage (0, 1, 2 or 3)");
  }
  return item[0] - '0';
}

Result<simulator::Precision> parse_precision_item(const std::string& item) {
  simulator::Precision p;
  if (simulator::parse_precision(item, &p)) return p;
  return Status::invalid_argument("--precision: '" + item +
                                  "' is not a precision (bf16, fp16, fp8 or nvfp4)");
}

// The size lists: global batches, tp, pp, cp, micro-batches, virtual stages.
Status parse_size_lists(const PlanSpaceFlags& f, PlanSpace* s) {
  using simulator::Plan;
  const auto given = [&](const char* name, const std::string& value) {
    return list_given(f, name, value);
  };
  if (given("--global-batch-tokens", f.global_batch_tokens)) {
    LLMPLAN_ASSIGN_OR_RETURN(s->global_batch_tokens,
                             parse_tokens_list(f.global_batch_tokens, "--global-batch-tokens"));
  }
  if (given("--global-batch", f.global_batch)) {
    LLMPLAN_ASSIGN_OR_RETURN(s->global_batch,
                             parse_int_list(f.global_batch, "--global-batch", Plan::kMaxGlobalBatch));
  }
  if (given("--tp", f.tp)) {
    LLMPLAN_ASSIGN_OR_RETURN(s->tp, parse_int_list(f.tp, "--tp", Plan::kMaxGpus));
  }
  if (given("--pp", f.pp)) {
    LLMPLAN_ASSIGN_OR_RETURN(s->pp, parse_int_list(f.pp, "--pp", Plan::kMaxGpus));
  }
  if (given("--cp", f.cp)) {
    LLMPLAN_ASSIGN_OR_RETURN(s->context_parallel, parse_int_list(f.cp, "--cp", Plan::kMaxGpus));
  }
  if (given("--micro-batch", f.micro_batch)) {
    LLMPLAN_ASSIGN_OR_RETURN(s->micro_batch,
                             parse_int_list(f.micro_batch, "--micro-batch", Plan::kMaxGlobalBatch));
  }
  if (given("--virtual-stages", f.virtual_stages)) {
    LLMPLAN_ASSIGN_OR_RETURN(s->virtual_stages, parse_int_list(f.virtual_stages, "--virtual-stages",
                                                              simulator::Model::kMaxLayers));
  }
  return Status();
}

// The other axes: schedule, recompute, sharding, expert parallelism, the
// on/off/both choices, precision and FP8 recipe.
Status parse_axis_lists(const PlanSpaceFlags& f, PlanSpace* s) {
  using simulator::Plan;
  const auto given = [&](const char* name, const std::string& value) {
    return list_given(f, name, value);
  };
  if (given("--schedule", f.schedule)) {
    LLMPLAN_RETURN_IF_ERROR(
        parse_unique_list(f.schedule, "--schedule", parse_schedule_item, &s->schedule));
  }
  if (given("--recompute", f.recompute)) {
    LLMPLAN_RETURN_IF_ERROR(
        parse_unique_list(f.recompute, "--recompute", parse_recompute_item, &s->recompute));
  }
  if (!f.sequence_parallel.empty()) {
    LLMPLAN_ASSIGN_OR_RETURN(s->sequence_parallel, parse_choice(f.sequence_parallel, "--sequence-parallel"));
  }
  if (!f.distributed_optimizer.empty()) {
    LLMPLAN_ASSIGN_OR_RETURN(s->distributed_optimizer,
                             parse_choice(f.distributed_optimizer, "--distributed-optimizer"));
  }
  if (given("--zero", f.zero)) {
    LLMPLAN_RETURN_IF_ERROR(parse_unique_list(f.zero, "--zero", parse_zero_item, &s->zero_stage));
  }
  if (given("--fsdp-group", f.fsdp_group)) {
    LLMPLAN_ASSIGN_OR_RETURN(s->fsdp_group,
                             parse_int_list(f.fsdp_group, "--fsdp-group", Plan::kMaxGpus));
  }
  if (given("--ep", f.ep)) {
    LLMPLAN_ASSIGN_OR_RETURN(s->expert_parallel, parse_int_list(f.ep, "--ep", Plan::kMaxGpus));
  }
  const std::pair<const std::string*, std::pair<Choice*, const char*>> choices[] = {
      {&f.moe_a2a_overlap, {&s->moe_a2a_overlap, "--moe-a2a-overlap"}},
      {&f.tp_comm_overlap, {&s->tp_comm_overlap, "--tp-comm-overlap"}},
      {&f.overlap_grad_reduce, {&s->overlap_grad_reduce, "--overlap-grad-reduce"}},
      {&f.overlap_param_gather, {&s->overlap_param_gather, "--overlap-param-gather"}}};
  for (const auto& [text, target] : choices) {
    if (!text->empty()) {
      LLMPLAN_ASSIGN_OR_RETURN(*target.first, parse_choice(*text, target.second));
    }
  }
  if (given("--precision", f.precision)) {
    LLMPLAN_RETURN_IF_ERROR(
        parse_unique_list(f.precision, "--precision", parse_precision_item, &s->precision));
  }
  if (!f.fp8_recipe.empty()) {
    simulator::parse_fp8_recipe(f.fp8_recipe, &s->fp8_recipe);  // a name CLI::IsMember admitted
  }
  return Status();
}

}  // namespace

Result<PlanSpace> to_plan_space(const PlanSpaceFlags& f) {
  PlanSpace s;
  LLMPLAN_RETURN_IF_ERROR(parse_size_lists(f, &s));
  LLMPLAN_RETURN_IF_ERROR(parse_axis_lists(f, &s));
  s.max_model_parallel = f.max_model_parallel;
  LLMPLAN_RETURN_IF_ERROR(validate(s));
  return s;
}

}  // namespace llmplan::planner

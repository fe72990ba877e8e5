// The plan-space flags shared by the planner and `sweep`: comma-separated
// lists per axis (--tp 4,8 --pp 1,2,4 --recompute none,full ...), parsed into
// a PlanSpace with one-line errors naming the flag.
#ifndef LLMPLAN_PLANNER_CLI_PLAN_SPACE_FLAGS_H_
#define LLMPLAN_PLANNER_CLI_PLAN_SPACE_FLAGS_H_

#include <CLI/CLI.hpp>
#include <set>
#include <string>
#include <vector>

#include "planner/search/plan_space.h"
#include "base/status.h"

namespace llmplan::planner {

// The flags as given (empty string: not given).
struct PlanSpaceFlags {
  std::string global_batch_tokens, global_batch, tp, pp, cp, micro_batch, virtual_stages, recompute;
  std::string schedule;
  std::string sequence_parallel, distributed_optimizer;
  std::string zero, fsdp_group, tp_comm_overlap, overlap_grad_reduce, overlap_param_gather;
  std::string precision, fp8_recipe;
  std::string ep, moe_a2a_overlap;
  int max_model_parallel = 0;
  // The flags given on the command line (recorded while parsing), to tell a
  // flag given an empty value ("--tp ''": an error) from one not given.
  std::set<std::string> given;
};

// Registers --global-batch-tokens, --global-batch, --tp, --pp, --cp, --micro-batch,
// --virtual-stages, --schedule, --recompute, --sequence-parallel, --distributed-optimizer,
// --zero, --fsdp-group, --tp-comm-overlap, --overlap-grad-reduce,
// --overlap-param-gather, --precision, --fp8-recipe, --ep, --moe-a2a-overlap and
// --max-model-parallel on `cmd`; `what` prefixes the help texts.
void add_plan_space_flags(CLI::App* cmd, PlanSpaceFlags* flags, const std::string& what);

// A comma-separated list of positive integers ("1,2,4"). InvalidArgument
// "<flag>: ..." for an empty list, an empty item, a repeated value, or an
// item that is not an integer in [1, max] ("--tp: must be an integer from 1
// to 1048576, got 0", the wording of the other integer flags).
Result<std::vector<int>> parse_int_list(const std::string& text, const std::string& flag, int max);

// A comma-separated list of token counts; each a positive number with an
// optional K/M/G suffix (binary: 4M = 4 x 2^20) or plain digits/exponent.
Result<std::vector<double>> parse_tokens_list(const std::string& text, const std::string& flag);

// The space the flags describe (validate()d). Flags not given stay
// automatic.
Result<PlanSpace> to_plan_space(const PlanSpaceFlags& flags);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_CLI_PLAN_SPACE_FLAGS_H_

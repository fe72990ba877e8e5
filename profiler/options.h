// Command-line options of llmplan-profile and the layer shapes they name.
//
// Plain C++ (no CUDA) so that the tests cover flag handling and --list.
#ifndef LLMPLAN_PROFILER_OPTIONS_H_
#define LLMPLAN_PROFILER_OPTIONS_H_

#include <string>
#include <vector>

#include "profiler/moe_plan.h"
#include "simulator/plan.h"
#include "simulator/profile_table.h"
#include "base/status.h"

namespace llmplan::profiler {

// Per-model fields (paired by position) and swept fields (all combinations)
// from the flags. --hidden and --heads are lists of equal length, one entry
// per model; --kv-heads, --ffn and --vocab are empty, one value for every
// model, or one per model. --seq, --micro-batch and --tp are swept.
struct ShapeFlags {
  std::vector<int> hidden;
  std::vector<int> heads;
  std::vector<int> kv_heads;
  std::vector<int> ffn;
  std::vector<int> vocab;
  std::vector<int> seq;
  std::vector<int> micro_batch;
  std::vector<int> tp;
  simulator::Activation activation = simulator::Activation::kGelu;
};

// The shapes the flags name, in order (models, then seq, micro batch, tp).
// Combinations that are not valid layers (e.g. tp not dividing the heads)
// are left out and described in *skipped. InvalidArgument when the lists do
// not pair up or no valid shape remains.
Result<std::vector<simulator::ProfileShape>> expand_shapes(const ShapeFlags& flags,
                                                           std::vector<std::string>* skipped);

// Everything llmplan-profile was asked to do.
struct ProfileOptions {
  std::vector<simulator::ProfileShape> shapes;
  std::vector<std::string> skipped_shapes;  // from expand_shapes
  std::vector<simulator::Precision> precisions = {simulator::Precision::kBf16};
  int warmup = 5;
  int repeats = 20;
  int device = 0;  // GPU for the kernel measurements
  bool collectives = true;
  double collective_min_bytes = 1024;     // 1 KiB
  double collective_max_bytes = 1 << 30;  // 1 GiB
  std::string output_path = "profile.json";
  bool list_only = false;     // --list: print the plan, touch no GPU
  bool show_help = false;     // --help: print help_text and exit 0
  bool show_version = false;  // --version: print the version line and exit 0
  std::string help_text;
  // --moe: measure the MoE kernel set (moe_plan.h) instead of layer shapes,
  // into a separate JSON file; the layer-shape flags are then not allowed.
  bool moe = false;
  MoeSettings moe_settings;
  std::string command_line;  // argv joined by spaces, for the MoE file
};

// Parses argv (argv[0] is the program name). Shapes come from --shapes FILE
// (see read_profile_shapes_file) or from the shape flags; one of the two is
// required unless --help, --version or --moe. With --moe the MoE models come
// from --moe-hidden, --moe-experts, --moe-top-k, --moe-expert-ffn (paired by
// position; the last three and --moe-router take one value or one per
// model) and the grid from --moe-local-experts, --moe-m, --moe-tokens,
// --moe-max-rows; --moe-* flags without --moe are an error. InvalidArgument with a one-line
// message for bad flags or values. Never throws.
Result<ProfileOptions> parse_profile_args(int argc, const char* const* argv);

// OK when `gpu` (device number `device`, for the message) runs every
// precision in `precisions`: fp8 needs compute capability 8.9 or newer
// (Ada, Hopper, Blackwell; A100 is 8.0). InvalidArgument, one line naming
// --precision fp8, the GPU and its compute capability, otherwise. Pure.
Status check_gpu_precisions(const std::vector<simulator::Precision>& precisions,
                            const simulator::ProfileGpu& gpu, int device);

}  // namespace llmplan::profiler

#endif  // LLMPLAN_PROFILER_OPTIONS_H_

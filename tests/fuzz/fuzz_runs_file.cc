// Fuzz target: runs files (`validate`/`calibrate` RUNS, planner/accuracy/
// runs_file.h): the JSON form when the input starts with '[', else the
// published-runs CSV joined with a fixed three-model table (one MoE model).
#include "planner/accuracy/runs_file.h"
#include "tests/fuzz/fuzz_common.h"

using namespace llmplan;

namespace {
constexpr const char* kModels =
    "model,layers,hidden,heads,kv_heads,head_dim,ffn,vocab,seq,activation,tied_embeddings,"
    "positions,linear_bias,norm,moe_experts,moe_top_k,moe_expert_ffn,moe_shared_experts,"
    "moe_layer_pattern,shape_notes\n"
    "mpt-7b,32,4096,32,32,128,16384,50368,2048,gelu,true,learned,true,LayerNorm,0,0,0,0,dense,\n"
    "llama2-70b,80,8192,64,8,128,28672,32000,4096,swiglu,false,rotary,false,RMSNorm,0,0,0,0,"
    "dense,\n"
    "oss,36,2880,64,8,64,2880,201088,4096,swiglu,false,rotary,true,RMSNorm,128,4,2880,0,"
    "every layer MoE,sliding-window attention (window 128) window_attn_skip_freq 2\n";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const presets::Catalog catalog = presets::Catalog::builtin().value();
  const std::string_view text = fuzz::as_text(data, size);
  const bool json = !text.empty() && text.front() == '[';
  Result<std::vector<planner::PublishedRun>> runs =
      json ? planner::read_runs_json_text(text, "fuzz.json", catalog)
           : planner::read_runs_csv_text(text, "fuzz.csv", kModels, "models.csv", catalog);
  fuzz::require_one_line(runs);
  if (!runs.ok()) return 0;
  fuzz::require(!runs->empty() && runs->size() <= planner::kMaxRunsFileRows, "1..cap rows");
  if (json) {
    fuzz::require_one_document(text, [](std::string_view t) {
      return planner::read_runs_json_text(t, "fuzz.json", catalog);
    });
  }
  for (const planner::PublishedRun& r : *runs) {
    fuzz::require(r.measured_step_s > 0 && !r.name.empty(), "rows are named, times positive");
    if (r.missing.empty()) {
      fuzz::require(presets::validate(r.config).ok(), "expressible rows are valid configs");
    }
  }
  return 0;
}

// Shared by the runs-file tests (runs_file_test.cc: the reader, the mapping
// of dense rows, folds and validation; runs_file_moe_test.cc: the MoE rows;
// blackwell_runs_test.cc and restricted_fit_test.cc: the Blackwell form):
// a small models table and runs-file rows as in data/h100, readers of rows
// under that table, the Blackwell form's header and models-table start, and
// `llmplan validate` read as JSON.
#ifndef LLMPLAN_TESTS_PLANNER_RUNS_FILE_ROWS_H_
#define LLMPLAN_TESTS_PLANNER_RUNS_FILE_ROWS_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/strict_json.h"
#include "planner/accuracy/runs_file.h"
#include "presets/catalog.h"
#include "tests/planner/simulate_cli.h"

namespace llmplan::planner::runs_file_rows {

// The columns of data/h100/models.csv the reader uses (MoE ones included).
inline constexpr const char* kModelsHeader =
    "model,layers,hidden,heads,kv_heads,head_dim,ffn,vocab,seq,activation,tied_embeddings,"
    "positions,linear_bias,norm,moe_experts,moe_top_k,moe_expert_ffn,moe_shared_experts,"
    "moe_layer_pattern\n";
inline const std::string kModels = std::string(kModelsHeader) +
                            "mpt-7b,32,4096,32,32,128,16384,50368,2048,gelu,true,learned,true,"
                            "LayerNorm,0,0,0,0,dense (no MoE)\n"
                            "llama2-70b,80,8192,64,8,128,28672,32000,4096,swiglu,false,rotary,"
                            "false,RMSNorm,0,0,0,0,dense (no MoE)\n"
                            "nemo-8b,32,4096,32,32,128,16384,256000,4096,squared-relu,false,"
                            "rotary,false,LayerNorm,0,0,0,0,dense (no MoE)\n"
                            "qwen-moe,48,2048,32,4,128,6144,151936,4096,swiglu,false,rotary,"
                            "false,RMSNorm,128,8,768,0,every layer MoE (moe_layer_freq not set)\n";

inline constexpr const char* kRunsHeader =
    "name,source,system,gpus,gpus_per_node,model,seq,precision,tp,pp,vp,cp,dp,ep,fsdp,"
    "micro_batch,global_batch,recompute,overlaps,measured_step_s\n";
// One llm-foundry MPT row and one Megatron row (as in data/h100).
inline const std::string kMptRow =
    "mpt-7b_foundry_bf16_s2048_8gpu_gbs512,\"https://github.com/mosaicml/llm-foundry/blob/x/"
    "README.md (table)\",H100,8,unstated,mpt-7b,2048,bf16 (amp_bf16),1,1,1,1,8,1,\"zero3 "
    "(PyTorch FSDP FULL_SHARD, sharded over all 8 GPUs)\",8,512,full (activation checkpointing "
    "on),unstated (PyTorch FSDP),1.250\n";
inline const std::string kMegatronRow =
    "llama2-70b_mlm_bf16_64gpu_gbs128,https://github.com/NVIDIA/Megatron-LM/blob/x/README.md,"
    "DGX-H100,64,8 (DGX-H100),llama2-70b,4096,bf16,4,4,5,1,4,1,\"zero1 (distributed optimizer)\","
    "1,128,none (recipe),\"TP-comm overlap on (--tp-comm-overlap); DP grad-reduce and "
    "param-gather overlap on (--overlap-grad-reduce --overlap-param-gather)\",9.000\n";

inline presets::Catalog catalog() {
  Result<presets::Catalog> c = presets::Catalog::builtin();
  EXPECT_TRUE(c.ok());
  return *c;
}

inline Result<std::vector<PublishedRun>> read(const std::string& rows,
                                       const std::string& models = kModels) {
  return read_runs_csv_text(std::string(kRunsHeader) + rows, "runs.csv", models, "models.csv",
                            catalog());
}

inline bool starts_with_qwen3(const std::string& model) { return model.rfind("qwen3-", 0) == 0; }

inline std::string error_of(const std::string& rows, const std::string& models = kModels) {
  Result<std::vector<PublishedRun>> r = read(rows, models);
  return r.ok() ? "OK" : r.status().message();
}

// The Blackwell form (data/blackwell/): its header row, and its models
// table's header (with the shape notes column) and Llama 3 8B row.
inline constexpr const char* kBlackwellHeader =
    "source,container,system,num_gpus,model,seq,precision,tp,pp,cp,vp,ep,etp,dp,micro_batch,"
    "global_batch,tokens_per_s_per_gpu,model_tflops_per_gpu,notes\n";
inline constexpr const char* kBlackwellModelsHeader =
    "model,layers,hidden,heads,kv_heads,head_dim,ffn,vocab,seq,activation,tied_embeddings,"
    "positions,linear_bias,norm,moe_experts,moe_top_k,moe_expert_ffn,moe_shared_experts,"
    "moe_layer_pattern,shape_notes\n";
inline constexpr const char* kBlackwellLlama3_8bModel =
    "llama3-8b,32,4096,32,8,128,14336,128256,8192,swiglu,false,rotary,false,RMSNorm,0,0,0,0,"
    "dense (no MoE),\n";

// What `llmplan validate ARGS` printed, read as JSON; the command's error
// when it fails.
inline Result<boost::json::value> run_validate_json(const std::string& args) {
  const testing_cli::CliRun run =
      testing_cli::run_command({add_validate_command}, "validate " + args);
  if (!run.status.ok()) return run.status;
  return json::parse(run.out, "validate");
}

}  // namespace llmplan::planner::runs_file_rows

#endif  // LLMPLAN_TESTS_PLANNER_RUNS_FILE_ROWS_H_

// What the tests of the Blackwell form of a runs file (data/blackwell/)
// share: its header row, and the models table's header (with the shape
// notes column) and Llama 3 8B row.
#ifndef LLMPLAN_TESTS_PLANNER_BLACKWELL_ROWS_H_
#define LLMPLAN_TESTS_PLANNER_BLACKWELL_ROWS_H_

namespace llmplan::planner::blackwell_rows {

inline constexpr const char* kModelsHeader =
    "model,layers,hidden,heads,kv_heads,head_dim,ffn,vocab,seq,activation,tied_embeddings,"
    "positions,linear_bias,norm,moe_experts,moe_top_k,moe_expert_ffn,moe_shared_experts,"
    "moe_layer_pattern,shape_notes\n";
inline constexpr const char* kLlama3_8bModel =
    "llama3-8b,32,4096,32,8,128,14336,128256,8192,swiglu,false,rotary,false,RMSNorm,0,0,0,0,"
    "dense (no MoE),\n";
inline constexpr const char* kHeader =
    "source,container,system,num_gpus,model,seq,precision,tp,pp,cp,vp,ep,etp,dp,micro_batch,"
    "global_batch,tokens_per_s_per_gpu,model_tflops_per_gpu,notes\n";

}  // namespace llmplan::planner::blackwell_rows

#endif  // LLMPLAN_TESTS_PLANNER_BLACKWELL_ROWS_H_

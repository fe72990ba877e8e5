// The hand-written models, plans and GPUs the simulator tests (and the
// benchmarks, hence no gtest here) set up runs with: models of today's common
// shape with the parameters of experts, Mamba-2 mixers and latent attention
// added in one call each, plans by their layout, and GPU figures.
#ifndef LLMPLAN_TESTS_SIMULATOR_TEST_MODELS_H_
#define LLMPLAN_TESTS_SIMULATOR_TEST_MODELS_H_

#include <string>
#include <tuple>

#include "simulator/cluster.h"
#include "simulator/model.h"
#include "simulator/plan.h"

namespace llmplan::simulator::testing {

// A GPT-style model (GELU, learned positions, tied embeddings, biases).
inline Model gpt(int layers, int hidden, int heads, int seq, int vocab = 50257) {
  Model m;
  m.name = "gpt-test";
  std::tie(m.num_layers, m.hidden_size, m.num_heads, m.seq_length, m.vocab_size) =
      std::tie(layers, hidden, heads, seq, vocab);
  return m;
}

// A model of today's common shape: SwiGLU, rotary positions, untied
// embeddings, no biases (RMSNorm); `ffn` the MLP width.
inline Model modern_model(const std::string& name, int layers, int hidden, int heads, int ffn,
                          int seq, int vocab) {
  Model m = gpt(layers, hidden, heads, seq, vocab);
  m.name = name;
  m.ffn_hidden_size = ffn;
  std::tie(m.activation, m.positions, m.tied_embeddings, m.linear_bias) =
      std::make_tuple(Activation::kSwiglu, PositionEmbedding::kRotary, false, false);
  return m;
}

// `m` with routed experts: `experts` of width `expert_ffn`, `top_k` per token.
inline void add_experts(Model* m, int experts, int top_k, int expert_ffn) {
  m->num_experts = experts;
  m->moe_top_k = top_k;
  m->moe_ffn_hidden_size = expert_ffn;
}

// `m` with Mamba-2 mixers placed by `pattern` (M, *, -, E per layer).
inline void add_mamba(Model* m, const std::string& pattern, int heads, int head_dim, int state_dim,
                      int groups) {
  m->layer_pattern = pattern;
  std::tie(m->mamba_heads, m->mamba_head_dim, m->mamba_state_dim, m->mamba_groups) =
      std::tie(heads, head_dim, state_dim, groups);
}

// `m` with multi-head latent attention of the given ranks and head widths.
inline void add_mla(Model* m, int q_lora_rank, int kv_lora_rank, int qk_nope_head_dim,
                    int qk_rope_head_dim, int v_head_dim) {
  std::tie(m->q_lora_rank, m->kv_lora_rank, m->qk_nope_head_dim, m->qk_rope_head_dim,
           m->v_head_dim) =
      std::tie(q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim);
}

// Qwen3-235B-A22B's layer shape (h 4096, 64 heads of 128, 4 kv heads, 128
// experts of 1536, top-8), `layers` layers.
inline Model qwen_like(int layers = 4) {
  Model m = modern_model("qwen3-like", layers, 4096, 64, 12288, 4096, 151936);
  m.num_kv_heads = 4;
  m.head_dim_size = 128;
  add_experts(&m, 128, 8, 1536);
  return m;
}

// A plan of `tensor` x `pipeline` x `data` GPUs and `global_batch`
// sequences, every other field at its default.
inline Plan layout_plan(int tensor, int pipeline, int data, int global_batch) {
  Plan p;
  std::tie(p.tensor_parallel, p.pipeline_parallel, p.data_parallel, p.global_batch_size) =
      std::tie(tensor, pipeline, data, global_batch);
  return p;
}

// layout_plan() with `expert` expert-parallel ranks.
inline Plan expert_plan(int tensor, int pipeline, int data, int expert, int global_batch) {
  Plan p = layout_plan(tensor, pipeline, data, global_batch);
  p.expert_parallel = expert;
  return p;
}

// The vTrain paper's MT-NLG 530B layout: (t, d, p) = (8, 12, 35), global
// batch 1920, micro-batch 1, full recompute, fp16.
inline Plan mt_nlg_plan() {
  Plan p = layout_plan(8, 35, 12, 1920);
  p.micro_batch_size = 1;
  p.recompute = Recompute::kFull;
  p.precision = Precision::kFp16;
  return p;
}

// `g` named `name` with the given dense tensor-core rates (bf16 and fp16
// alike), HBM bandwidth and SM count.
inline void set_gpu(GpuSpec* g, const std::string& name, double bf16_flops, double fp8_flops,
                    double hbm_bytes_per_s, int num_sms) {
  g->name = name;
  std::tie(g->peak_bf16_flops, g->peak_fp16_flops, g->peak_fp8_flops, g->hbm_bytes_per_s,
           g->num_sms) = std::tie(bf16_flops, bf16_flops, fp8_flops, hbm_bytes_per_s, num_sms);
}

}  // namespace llmplan::simulator::testing

#endif  // LLMPLAN_TESTS_SIMULATOR_TEST_MODELS_H_

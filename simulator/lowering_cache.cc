#include "simulator/lowering_cache.h"

#include <mutex>
#include <utility>

namespace llmplan::simulator {
namespace {

// Boost's hash_combine.
void combine(uint64_t* seed, uint64_t v) {
  *seed ^= v + 0x9e3779b97f4a7c15ULL + (*seed << 6) + (*seed >> 2);
}

// A hash of the fields that tell the search's shapes apart (equality of
// the whole model decides a match).
uint64_t model_hash(const Model& m) {
  uint64_t h = 0;
  for (int64_t v : {m.num_layers, m.hidden_size, m.num_heads, m.num_kv_heads, m.ffn_hidden_size,
                    m.seq_length, m.vocab_size, m.num_experts, m.moe_top_k,
                    m.moe_ffn_hidden_size}) {
    combine(&h, static_cast<uint64_t>(v));
  }
  return h;
}

}  // namespace

Plan lowering_key_plan(const Plan& plan) {
  const Plan defaults;
  Plan key = plan;
  // Read by the memory model and the data-parallel replay, never lowered.
  key.global_batch_size = defaults.global_batch_size;
  key.grad_bucket_bytes = defaults.grad_bucket_bytes;
  key.dropout = defaults.dropout;
  key.fused_cross_entropy = defaults.fused_cross_entropy;
  key.cpu_offload_v1 = defaults.cpu_offload_v1;
  // Below ZeRO-2 the lowering reads no data-parallel group (shard_passes
  // returns at once) and no data-parallel overlap flag; the ZeRO stage only
  // as sharding_stage() >= 2 or >= 3.
  if (plan.sharding_stage() < 2) {
    key.data_parallel = defaults.data_parallel;
    key.fsdp_group = defaults.fsdp_group;
    key.zero_stage = defaults.zero_stage;
    key.distributed_optimizer = defaults.distributed_optimizer;
    key.overlap_grad_reduce = defaults.overlap_grad_reduce;
    key.overlap_param_gather = defaults.overlap_param_gather;
  }
  return key;
}

size_t LoweringCache::KeyHash::operator()(const Key& key) const {
  const Plan& p = key.plan;
  uint64_t h = 0;
  for (int64_t v :
       {int64_t{key.model}, int64_t{key.chunk}, int64_t{p.tensor_parallel},
        int64_t{p.pipeline_parallel}, int64_t{p.data_parallel}, int64_t{p.context_parallel},
        int64_t{p.micro_batch_size}, int64_t{p.virtual_stages}, static_cast<int64_t>(p.schedule),
        static_cast<int64_t>(p.recompute), static_cast<int64_t>(p.precision),
        static_cast<int64_t>(p.fp8_recipe), int64_t{p.zero_stage}, int64_t{p.expert_parallel},
        int64_t{p.expert_tensor_parallel},
        int64_t{p.sequence_parallel} * 8 + int64_t{p.tp_comm_overlap} * 4 +
            int64_t{p.moe_a2a_overlap} * 2 + int64_t{p.rope_fusion}}) {
    combine(&h, static_cast<uint64_t>(v));
  }
  return static_cast<size_t>(h);
}

int LoweringCache::find_model(const Model& model, uint64_t hash) const {
  const auto [begin, end] = model_index_.equal_range(hash);
  for (auto it = begin; it != end; ++it) {
    if (*models_[it->second] == model) return it->second;
  }
  return -1;
}

int LoweringCache::add_model(const Model& model, uint64_t hash) {
  const int found = find_model(model, hash);
  if (found >= 0) return found;
  const int index = static_cast<int>(models_.size());
  models_.push_back(std::make_unique<const Model>(model));
  model_index_.emplace(hash, index);
  return index;
}

ChunkPassTimes LoweringCache::pass_times(const Model& model, const Plan& plan,
                                         const Placement& placement, const CostModel& cost,
                                         int chunk) {
  const uint64_t hash = model_hash(model);
  Key key;
  key.chunk = chunk;
  key.plan = lowering_key_plan(plan);
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    key.model = find_model(model, hash);
    if (key.model >= 0) {
      const auto it = entries_.find(key);
      if (it != entries_.end()) {
        hits_.fetch_add(1, std::memory_order_relaxed);
        return it->second;
      }
    }
  }
  // Lowered outside the lock: other threads' lookups go on meanwhile.
  const ChunkPassTimes times = pass_times_of(lower_chunk(model, plan, placement, cost, chunk));
  std::unique_lock<std::shared_mutex> lock(mu_);
  key.model = add_model(model, hash);
  if (entries_.count(key) > 0) return times;  // another thread's insert: equal
  ++misses_;
  if (max_entries_ == 0) return times;
  while (entries_.size() >= max_entries_) {
    entries_.erase(order_.front());
    order_.pop_front();
    ++dropped_;
  }
  order_.push_back(key);
  entries_.emplace(std::move(key), times);
  return times;
}

LoweringCache::Stats LoweringCache::stats() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  Stats s;
  s.hits = hits_.load(std::memory_order_relaxed);
  s.misses = misses_;
  s.entries = static_cast<long>(entries_.size());
  s.models = static_cast<long>(models_.size());
  s.dropped = dropped_;
  return s;
}

ChunkPassTimes pass_times_of(const ChunkProgram& program) {
  ChunkPassTimes t;
  t.forward_s = program.forward_s;
  t.backward_s = program.backward_s;
  t.split_backward = program.split_backward;
  t.backward_input_s = program.backward_input_s;
  t.backward_weight_s = program.backward_weight_s;
  return t;
}

ChunkPassTimes chunk_pass_times(LoweringCache* cache, const Model& model, const Plan& plan,
                                const Placement& placement, const CostModel& cost, int chunk) {
  if (cache != nullptr) return cache->pass_times(model, plan, placement, cost, chunk);
  return pass_times_of(lower_chunk(model, plan, placement, cost, chunk));
}

}  // namespace llmplan::simulator

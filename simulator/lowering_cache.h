// Pass times of lowered pipeline chunks shared between plans (issue 30,
// shared cost set-up). The planner's pruning bound (planner/search/prune.h,
// lowered_lower_bound_s) lowers one stage's chunks of every plan the FLOP
// bound keeps, only to add up their forward and backward pass times; many
// plans of one shape lower the same chunk: those that differ only in the
// global batch, or only in the data-parallel width below ZeRO-2. This
// cache keeps each chunk's pass times, so such a chunk is lowered once per
// search (or once per hardware entry of a frontier study).
//
// Why pass times and not the lowered programs: a cache of whole
// ChunkPrograms for simulate() was built and measured (one thread, A/B
// against main, medians of 3-5 runs): the main job went from 0.26 to 0.29 s
// (32 MiB of programs) and 0.33 s (256 MiB), the MoE question from 3.62 to
// 4.05 and 4.26 s, although 33-56 % of lookups hit. Lowering costs about
// 30 ns per op while a program holds 72 bytes per op (LoweredOp), so a
// program read back cold from memory (and the page faults of keeping
// 150-300 MB of them) costs more than lowering it again into warm, reused
// buffers. Pass times are a few doubles per chunk.
//
// The key: the model (all of it), the chunk index, and the plan with the
// fields lower_chunk() never reads reset (lowering_key_plan): the global
// batch, the gradient bucket size, dropout and the fused cross-entropy
// (memory and data-parallel replay only); and, below ZeRO-2
// (sharding_stage() < 2, where shard_passes() returns at once), the
// data-parallel width, the hybrid-sharding group, ZeRO-0 vs 1 and the two
// data-parallel overlap flags. Everything else of the plan stays in the key,
// so a field added to Plan is in the key until someone shows the lowering
// ignores it. The cluster and the cost model are the cache's own: one cache
// serves searches of one cluster and one cost model (two Roofline cost
// models of the same cluster are the same).
//
// Results are bit-identical with or without a cache: pass times are a pure
// function of the key (lower_chunk is deterministic), and a cached value is
// that same value. Memory is bounded by max_entries (about 330 bytes each:
// the key, which holds a Plan, twice, and the times; the MoE question of
// docs/speed.md keeps 43,478 entries, about 14 MB):
// past it the oldest entries are dropped (first in, first out), which
// changes only how often a chunk is lowered, never a value. Thread-safe:
// lookups share a lock, inserts take it alone; two threads missing the same
// key both lower it and the first insert wins (both values are equal).
#ifndef LLMPLAN_SIMULATOR_LOWERING_CACHE_H_
#define LLMPLAN_SIMULATOR_LOWERING_CACHE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "simulator/cost_model.h"
#include "simulator/lowering.h"
#include "simulator/model.h"
#include "simulator/plan.h"

namespace llmplan::simulator {

// `plan` with the fields lower_chunk() never reads reset to their defaults
// (see the header comment): two plans with equal key plans lower every chunk
// of one model to equal programs on one cluster and cost model.
// lowering_cache_test.cc checks, field by field, that changing a kept field
// changes some program and that changing a reset one changes none.
Plan lowering_key_plan(const Plan& plan);

// The pass times of one lowered chunk (ChunkProgram's fields of the same names).
struct ChunkPassTimes {
  double forward_s = 0;
  double backward_s = 0;
  bool split_backward = false;
  double backward_input_s = 0, backward_weight_s = 0;
  friend bool operator==(const ChunkPassTimes&, const ChunkPassTimes&) = default;
};

class LoweringCache {
 public:
  // The default bound on entries: 2^18, about 85 MB.
  static constexpr size_t kDefaultMaxEntries = size_t{1} << 18;

  struct Stats {
    long hits = 0;     // lookups served from the cache
    long misses = 0;   // lookups that lowered the chunk
    long entries = 0;  // entries held
    long models = 0;   // distinct models seen
    long dropped = 0;  // entries dropped, oldest first, to stay within max_entries
  };

  explicit LoweringCache(size_t max_entries = kDefaultMaxEntries) : max_entries_(max_entries) {}
  LoweringCache(const LoweringCache&) = delete;
  LoweringCache& operator=(const LoweringCache&) = delete;

  // The pass times of lower_chunk(model, plan, placement, cost, chunk),
  // lowered on the first call for its key and shared after. `placement`
  // must be place(plan, cluster) and `cost` the cost model of the cache's
  // cluster. REQUIRES: validate(model, plan).ok(); 0 <= chunk < p*v.
  ChunkPassTimes pass_times(const Model& model, const Plan& plan, const Placement& placement,
                            const CostModel& cost, int chunk);

  Stats stats() const;

 private:
  struct Key {
    int model = 0;  // index into models_
    int chunk = 0;
    Plan plan;      // lowering_key_plan
    friend bool operator==(const Key&, const Key&) = default;
  };
  struct KeyHash {
    size_t operator()(const Key& key) const;
  };
  // The index of `model` in models_; -1 when absent. REQUIRES: mu_ held.
  int find_model(const Model& model, uint64_t hash) const;
  // find_model, adding the model when absent. REQUIRES: mu_ held alone.
  int add_model(const Model& model, uint64_t hash);

  const size_t max_entries_;
  mutable std::shared_mutex mu_;
  std::vector<std::unique_ptr<const Model>> models_;
  std::unordered_multimap<uint64_t, int> model_index_;  // model hash -> index in models_
  std::unordered_map<Key, ChunkPassTimes, KeyHash> entries_;
  std::deque<Key> order_;  // the keys of entries_, oldest first
  // Counters: hits updated under the shared lock (atomic), the rest under mu_ alone.
  std::atomic<long> hits_{0};
  long misses_ = 0, dropped_ = 0;
};

// The pass times of `program`.
ChunkPassTimes pass_times_of(const ChunkProgram& program);

// LoweringCache::pass_times through `cache` when it is not null, else the
// chunk lowered afresh: the same value either way.
ChunkPassTimes chunk_pass_times(LoweringCache* cache, const Model& model, const Plan& plan,
                                const Placement& placement, const CostModel& cost, int chunk);

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_LOWERING_CACHE_H_

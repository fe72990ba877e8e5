#include "planner/search/enumeration_cache.h"

namespace llmplan::planner {

std::shared_ptr<const EnumerationCache::Entry> EnumerationCache::get(
    const simulator::Model& model, const simulator::Cluster& cluster, int gpus,
    const PlanSpace& space) {
  const Key key{gpus, space.global_batch_tokens, space.global_batch, space.every_width};
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = slots_.find(key);
    if (it != slots_.end()) {
      for (const Slot& s : it->second) {
        if (s.model == model) {
          ++hits_;
          return s.entry;
        }
      }
    }
  }
  // Computed outside the lock: enumerations of other keys go on meanwhile.
  auto entry = std::make_shared<Entry>();
  entry->plans = enumerate_plans(model, cluster, gpus, space, &entry->stats);
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Slot>& slots = slots_[key];
  for (const Slot& s : slots) {
    if (s.model == model) {
      ++hits_;
      return s.entry;
    }
  }
  ++misses_;
  slots.push_back({model, entry});
  return entry;
}

long EnumerationCache::misses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return misses_;
}

long EnumerationCache::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}

}  // namespace llmplan::planner

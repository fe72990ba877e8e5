// Plan enumerations shared between searches (issue 30): `llmplan frontier`
// runs one search per cell, and the cells of one hardware and GPU count
// (every deadline, and every budget whose plan space is the same) enumerate
// the same shapes' plans; enumerate_plans() (its memory estimate of every
// layout) was a third of the frontier study's CPU. A cache remembers each
// enumeration, so each is computed once per study.
//
// A cache belongs to one cluster and one PlanSpace (SearchOptions::space):
// its key is what enumerate_step() varies per search and shape -- the
// model, the GPU count, the batch lists and every_width -- so sharing a
// cache between searches with different clusters or plan spaces is a bug
// (the frontier keeps one per hardware entry). enumerate_plans() is pure, so
// a cached enumeration is the one the search would compute: results are
// identical with or without a cache, for any thread count. Thread-safe.
#ifndef LLMPLAN_PLANNER_SEARCH_ENUMERATION_CACHE_H_
#define LLMPLAN_PLANNER_SEARCH_ENUMERATION_CACHE_H_

#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "planner/search/plan_space.h"
#include "simulator/cluster.h"
#include "simulator/model.h"
#include "simulator/plan.h"

namespace llmplan::planner {

class EnumerationCache {
 public:
  struct Entry {
    std::vector<simulator::Plan> plans;
    EnumerationStats stats;
  };
  // enumerate_plans(model, cluster, gpus, space, &stats) of the cache's
  // cluster and space (with space's batch lists and every_width as given),
  // computed on the first call and shared after. The first insert wins when
  // two threads compute the same key at once (both equal).
  std::shared_ptr<const Entry> get(const simulator::Model& model, const simulator::Cluster& cluster,
                                   int gpus, const PlanSpace& space);
  // Enumerations computed (misses) and served from the cache (hits).
  long misses() const;
  long hits() const;

 private:
  using Key = std::tuple<int, std::vector<double>, std::vector<int>, bool>;
  struct Slot {
    simulator::Model model;
    std::shared_ptr<const Entry> entry;
  };
  mutable std::mutex mu_;
  std::map<Key, std::vector<Slot>> slots_;
  long misses_ = 0, hits_ = 0;
};

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_SEARCH_ENUMERATION_CACHE_H_

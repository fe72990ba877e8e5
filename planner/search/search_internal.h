// The search's steps as the search's own files share them (search.cc,
// search_run.cc, search_stages.cc): enumerating a step's plans, assembling
// its result and merging results. Not part of the search's interface.
#ifndef LLMPLAN_PLANNER_SEARCH_SEARCH_INTERNAL_H_
#define LLMPLAN_PLANNER_SEARCH_SEARCH_INTERNAL_H_

#include <vector>

#include "planner/search/search_types.h"
#include "simulator/cluster.h"
#include "simulator/model.h"

namespace llmplan::planner::search_internal {

// The candidates of `models` and their plans to simulate (the plan space of
// each shape on options.gpus GPUs, in its order).
void enumerate_step(const std::vector<simulator::Model>& models, const simulator::Cluster& cluster,
                    const SearchOptions& options, std::vector<Candidate>* candidates,
                    std::vector<PlanTask>* tasks);

// A step's result: its candidates and every task's simulation.
SearchResult assemble_step(std::vector<Candidate> candidates, const std::vector<PlanTask>& tasks,
                           const std::vector<PlanResult>& results);

// Appends `more` to `into` (shape and plan indices remapped), then sorts the
// candidates by parameter count.
void merge(SearchResult more, SearchResult* into);

// Whether a candidate of `cs` has model `m`.
bool contains(const std::vector<Candidate>& cs, const simulator::Model& m);

}  // namespace llmplan::planner::search_internal

#endif  // LLMPLAN_PLANNER_SEARCH_SEARCH_INTERNAL_H_

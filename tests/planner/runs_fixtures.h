// Test fixture: the accuracy cases of a shipped runs file under data/.
#ifndef LLMPLAN_TESTS_PLANNER_RUNS_FIXTURES_H_
#define LLMPLAN_TESTS_PLANNER_RUNS_FIXTURES_H_

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "planner/accuracy/accuracy.h"
#include "planner/accuracy/runs_file.h"
#include "presets/catalog.h"

namespace llmplan::planner::fixtures {

// The cases of the expressible rows of data/`relative_path` (a runs file),
// in file order. A file that does not read is a test failure and no cases.
inline std::vector<AccuracyCase> shipped_runs_cases(const std::string& relative_path) {
  Result<presets::Catalog> catalog = presets::Catalog::builtin();
  if (!catalog.ok()) {
    ADD_FAILURE() << catalog.status().message();
    return {};
  }
  const std::string path = std::string(LLMPLAN_DATA_DIR) + "/" + relative_path;
  Result<std::vector<PublishedRun>> runs = read_runs_file(path, "", *catalog);
  if (!runs.ok()) {
    ADD_FAILURE() << runs.status().message();
    return {};
  }
  std::vector<PublishedRun> expressible;
  for (const PublishedRun& r : *runs) {
    if (r.missing.empty()) expressible.push_back(r);
  }
  return make_runs_cases(expressible);
}

}  // namespace llmplan::planner::fixtures

#endif  // LLMPLAN_TESTS_PLANNER_RUNS_FIXTURES_H_

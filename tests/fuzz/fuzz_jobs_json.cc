// Fuzz target: JSON job files (`schedule --jobs FILE.json`,
// planner/study/schedule/job.h). Jobs read must be valid.
#include "planner/study/schedule/job.h"
#include "presets/catalog.h"
#include "tests/fuzz/fuzz_common.h"

using namespace llmplan;
using namespace llmplan::planner::schedule;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const presets::Catalog catalog = presets::Catalog::builtin().value();
  Result<std::vector<Job>> jobs =
      read_jobs_json(std::string(fuzz::as_text(data, size)), "fuzz.json", catalog);
  fuzz::require_one_line(jobs);
  if (!jobs.ok()) return 0;
  fuzz::require(!jobs->empty() && jobs->size() <= kMaxJobsPerFile, "1..cap jobs");
  fuzz::require_one_document(fuzz::as_text(data, size), [](std::string_view text) {
    return read_jobs_json(std::string(text), "fuzz.json", catalog);
  });
  for (const Job& job : *jobs) fuzz::require(validate_job(job, "job").ok(), "jobs are valid");
  return 0;
}

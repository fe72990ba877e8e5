// Fuzz target: CSV job files (`schedule --jobs FILE.csv`,
// planner/study/schedule/job.h). Jobs read must be valid and read back equal
// from jobs_to_csv (every field but `line`).
#include "planner/study/schedule/job.h"
#include "presets/catalog.h"
#include "tests/fuzz/fuzz_common.h"

using namespace llmplan;
using namespace llmplan::planner::schedule;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const presets::Catalog catalog = presets::Catalog::builtin().value();
  Result<std::vector<Job>> jobs =
      read_jobs_csv(std::string(fuzz::as_text(data, size)), "fuzz.csv", catalog);
  fuzz::require_one_line(jobs);
  if (!jobs.ok()) return 0;
  for (const Job& job : *jobs) fuzz::require(validate_job(job, "job").ok(), "jobs are valid");
  const std::string csv = jobs_to_csv(*jobs);
  Result<std::vector<Job>> again = read_jobs_csv(csv, "again.csv", catalog);
  fuzz::require(again.ok(), "jobs_to_csv reads back", again.status().message());
  fuzz::require(again->size() == jobs->size(), "jobs_to_csv keeps every job");
  for (size_t i = 0; i < jobs->size(); ++i) {
    Job a = (*jobs)[i], b = (*again)[i];
    fuzz::require(a.name == b.name && a.model_name == b.model_name && a.model == b.model &&
                      a.tokens == b.tokens && a.arrival_s == b.arrival_s &&
                      a.deadline_s == b.deadline_s && a.min_gpus == b.min_gpus &&
                      a.max_gpus == b.max_gpus && a.gpus == b.gpus,
                  "jobs_to_csv reads back to equal jobs", csv);
  }
  return 0;
}

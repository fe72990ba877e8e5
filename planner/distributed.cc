// The process group without MPI: this process alone. (The MPI build adds
// its implementation in distributed_mpi.cc instead of this file.)
#include <cstdlib>

#include "planner/distributed.h"

namespace llmplan::planner {

bool built_with_mpi() { return false; }
std::string mpi_library_version() { return ""; }

bool launched_by_mpi() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"}) {
    if (std::getenv(var) != nullptr) return true;
  }
  return std::getenv("SLURM_STEP_NUM_TASKS") != nullptr && std::getenv("SLURM_PROCID") != nullptr;
}

Result<ProcessGroup> join_process_group() { return ProcessGroup{}; }
void leave_process_group(const ProcessGroup&) {}

Result<std::vector<std::string>> all_gather(const ProcessGroup&, const std::string& mine) {
  return std::vector<std::string>{mine};
}

Result<std::string> broadcast_from_root(const ProcessGroup&, const std::string& blob) {
  return blob;
}

}  // namespace llmplan::planner

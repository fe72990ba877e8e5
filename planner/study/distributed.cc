// The process group. Without MPI, or outside an MPI launcher, it is this
// process alone. A build with MPI (LLMPLAN_WITH_MPI) loads the module
// llmplan_mpi.so (distributed_mpi.cc) on the first join under a launcher,
// so that no other command, and no single-process run, loads MPI's
// libraries (see distributed_module.h).
#include <cstdlib>
#include <initializer_list>
#include <string>

#include "planner/study/distributed.h"

#ifdef LLMPLAN_WITH_MPI
#include <dlfcn.h>
#include <unistd.h>

#include <climits>

#include "planner/study/distributed_module.h"
#endif

namespace llmplan::planner {
namespace {

#ifndef LLMPLAN_WITH_MPI
// The first of `vars` that is set, as a positive number; 0 if none is.
long env_number(std::initializer_list<const char*> vars) {
  for (const char* var : vars) {
    if (const char* value = std::getenv(var); value != nullptr) {
      char* end = nullptr;
      const long n = std::strtol(value, &end, 10);
      if (end != value && *end == '\0' && n >= 0) return n;
    }
  }
  return 0;
}

// How many processes the launcher started, as far as its environment says
// (0 when it does not say); a rank above 0 means more than one.
long launched_size() {
  const long size = env_number({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"});
  if (size > 0) return size;
  const long rank = env_number({"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"});
  return rank > 0 ? rank + 1 : 0;
}
#endif

#ifdef LLMPLAN_WITH_MPI
// The directory of this executable ("" if /proc/self/exe cannot be read).
std::string executable_dir() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return "";
  const std::string exe(path, static_cast<size_t>(n));
  return exe.substr(0, exe.rfind('/'));
}

struct LoadedModule {
  const MpiModule* module = nullptr;
  std::string error;  // why it could not be loaded
};

// Loads llmplan_mpi.so once per process: next to the executable (the build
// tree), then in the installed module directory relative to the
// executable's (LLMPLAN_MPI_MODULE_RELDIR, e.g. ../lib/x86_64-linux-gnu/llmplan).
// RTLD_GLOBAL: Open MPI's own plugins, which it dlopen()s during
// MPI_Init, resolve symbols of libmpi through the global scope.
LoadedModule load_module() {
  const std::string dir = executable_dir();
  std::string tried;
  for (const std::string& path : {dir + "/llmplan_mpi.so",
                                   dir + "/" LLMPLAN_MPI_MODULE_RELDIR "/llmplan_mpi.so"}) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      tried += (tried.empty() ? "" : "; ") + std::string(why != nullptr ? why : path);
      continue;
    }
    using Entry = const MpiModule* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(handle, "llmplan_mpi_module"));
    if (entry == nullptr || entry()->abi != kMpiModuleAbi) {
      return {nullptr, path + " is not this build's MPI module (no llmplan_mpi_module of ABI " +
                           std::to_string(kMpiModuleAbi) + ")"};
    }
    return {entry(), ""};
  }
  return {nullptr, "cannot load the MPI module llmplan_mpi.so (" + tried + ")"};
}

// The module, loaded on first use (thread-safe); nullptr and *error if it
// cannot be loaded.
const MpiModule* mpi_module(std::string* error) {
  static const LoadedModule loaded = load_module();
  if (loaded.module == nullptr) *error = loaded.error;
  return loaded.module;
}
#endif

}  // namespace

#ifdef LLMPLAN_WITH_MPI
bool built_with_mpi() { return true; }
std::string mpi_library_version() { return LLMPLAN_MPI_LIBRARY_VERSION; }
#else
bool built_with_mpi() { return false; }
std::string mpi_library_version() { return ""; }
#endif

bool launched_by_mpi() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"}) {
    if (std::getenv(var) != nullptr) return true;
  }
  return std::getenv("SLURM_STEP_NUM_TASKS") != nullptr && std::getenv("SLURM_PROCID") != nullptr;
}

Result<ProcessGroup> join_process_group() {
  if (!launched_by_mpi()) return ProcessGroup{};
#ifdef LLMPLAN_WITH_MPI
  std::string error;
  const MpiModule* mpi = mpi_module(&error);
  if (mpi == nullptr) return Status::internal(error);
  ProcessGroup group;
  if (!mpi->join(&group.rank, &group.size, &error)) return Status::internal(error);
  group.mpi = true;
  return group;
#else
  if (const long size = launched_size(); size > 1) {
    return Status::invalid_argument(
        "mpirun: this llmplan was built without MPI (configure with -DLLMPLAN_MPI=ON and an MPI "
        "library, e.g. Debian's libopenmpi-dev), yet it was started as one of " +
        std::to_string(size) + " processes, each of which would do all the work; run it "
        "without the launcher or with one process");
  }
  return ProcessGroup{};
#endif
}

void leave_process_group(const ProcessGroup& group) {
#ifdef LLMPLAN_WITH_MPI
  std::string error;
  if (group.mpi) {
    if (const MpiModule* mpi = mpi_module(&error); mpi != nullptr) mpi->leave();
  }
#else
  (void)group;
#endif
}

Result<std::vector<std::string>> all_gather(const ProcessGroup& group, const std::string& mine) {
#ifdef LLMPLAN_WITH_MPI
  if (group.mpi) {
    std::string error;
    const MpiModule* mpi = mpi_module(&error);
    if (mpi == nullptr) return Status::internal(error);
    std::vector<std::string> all;
    if (!mpi->all_gather(mine, &all, &error)) return Status::internal(error);
    return all;
  }
#else
  (void)group;
#endif
  return std::vector<std::string>{mine};
}

Result<std::string> broadcast_from_root(const ProcessGroup& group, const std::string& blob) {
#ifdef LLMPLAN_WITH_MPI
  if (group.mpi) {
    std::string error;
    const MpiModule* mpi = mpi_module(&error);
    if (mpi == nullptr) return Status::internal(error);
    std::string out = blob;
    if (!mpi->broadcast(&out, &error)) return Status::internal(error);
    return out;
  }
#else
  (void)group;
#endif
  return blob;
}

}  // namespace llmplan::planner

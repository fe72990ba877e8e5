// The MPI side of planner/study/distributed.h, built as the module llmplan_mpi.so
// (see distributed_module.h) and linked to the MPI library found by CMake
// (LLMPLAN_MPI). Only the thread that joined calls MPI (thread level
// FUNNELED); OpenMP threads inside a rank never do.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "planner/study/distributed_module.h"

namespace llmplan::planner {
namespace {

// The most bytes one MPI call moves: counts and displacements are ints.
// LLMPLAN_TEST_MPI_MAX_BYTES_PER_CALL (a positive number, for tests only)
// lowers it so that a test covers the splitting with small blobs.
std::int64_t max_bytes_per_call() {
  if (const char* value = std::getenv("LLMPLAN_TEST_MPI_MAX_BYTES_PER_CALL"); value != nullptr) {
    const long long n = std::atoll(value);
    if (n > 0 && n < INT_MAX) return n;
  }
  return INT_MAX;
}

// "MPI_Allgatherv failed: <the library's message>".
bool mpi_failed(const char* call, int code, std::string* error) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  *error = std::string(call) + " failed: " +
           (length > 0 ? std::string(text, static_cast<size_t>(length))
                       : "error code " + std::to_string(code));
  return false;
}

bool join(int* rank, int* size, std::string* error) {
  int initialized = 0;
  if (int rc = MPI_Initialized(&initialized); rc != MPI_SUCCESS) {
    return mpi_failed("MPI_Initialized", rc, error);
  }
  if (!initialized) {
    int provided = MPI_THREAD_SINGLE;
    if (int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
        rc != MPI_SUCCESS) {
      return mpi_failed("MPI_Init_thread", rc, error);
    }
    if (provided < MPI_THREAD_FUNNELED) {
      *error = "MPI_Init_thread: the MPI library offers only MPI_THREAD_SINGLE; llmplan runs "
               "OpenMP threads inside each rank and needs MPI_THREAD_FUNNELED";
      return false;
    }
  }
  // From here on a failing call returns its error to llmplan, which reports
  // it in one line, instead of aborting the job from inside the library.
  if (int rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); rc != MPI_SUCCESS) {
    return mpi_failed("MPI_Comm_set_errhandler", rc, error);
  }
  if (int rc = MPI_Comm_rank(MPI_COMM_WORLD, rank); rc != MPI_SUCCESS) {
    return mpi_failed("MPI_Comm_rank", rc, error);
  }
  if (int rc = MPI_Comm_size(MPI_COMM_WORLD, size); rc != MPI_SUCCESS) {
    return mpi_failed("MPI_Comm_size", rc, error);
  }
  return true;
}

void leave() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Finalize();
}

// Gathers every rank's bytes in rounds: each round, each rank sends the next
// at most max_bytes_per_call() / size bytes of its blob, so no count or
// displacement of one MPI_Allgatherv passes INT_MAX, whatever the sizes.
bool all_gather(const std::string& mine, std::vector<std::string>* all, std::string* error) {
  int size = 0, rank = 0;
  if (int rc = MPI_Comm_size(MPI_COMM_WORLD, &size); rc != MPI_SUCCESS) {
    return mpi_failed("MPI_Comm_size", rc, error);
  }
  if (int rc = MPI_Comm_rank(MPI_COMM_WORLD, &rank); rc != MPI_SUCCESS) {
    return mpi_failed("MPI_Comm_rank", rc, error);
  }
  const std::int64_t my_size = static_cast<std::int64_t>(mine.size());
  std::vector<std::int64_t> sizes(static_cast<size_t>(size), 0);
  if (int rc = MPI_Allgather(&my_size, 1, MPI_INT64_T, sizes.data(), 1, MPI_INT64_T,
                             MPI_COMM_WORLD);
      rc != MPI_SUCCESS) {
    return mpi_failed("MPI_Allgather (blob sizes)", rc, error);
  }
  all->assign(static_cast<size_t>(size), std::string());
  for (int r = 0; r < size; ++r) (*all)[static_cast<size_t>(r)].resize(static_cast<size_t>(sizes[r]));
  const std::int64_t chunk = std::max<std::int64_t>(1, max_bytes_per_call() / size);
  const std::int64_t largest = *std::max_element(sizes.begin(), sizes.end());
  std::vector<int> counts(static_cast<size_t>(size)), displacements(static_cast<size_t>(size));
  std::vector<char> received;
  for (std::int64_t offset = 0; offset < largest; offset += chunk) {
    int total = 0;
    for (int r = 0; r < size; ++r) {
      const std::int64_t left = std::max<std::int64_t>(0, sizes[r] - offset);
      counts[r] = static_cast<int>(std::min(left, chunk));
      displacements[r] = total;
      total += counts[r];
    }
    received.resize(static_cast<size_t>(total));
    const char* send = counts[rank] > 0 ? mine.data() + offset : mine.data();
    if (int rc = MPI_Allgatherv(send, counts[rank], MPI_BYTE, received.data(), counts.data(),
                                displacements.data(), MPI_BYTE, MPI_COMM_WORLD);
        rc != MPI_SUCCESS) {
      return mpi_failed("MPI_Allgatherv", rc, error);
    }
    for (int r = 0; r < size; ++r) {
      std::copy_n(received.data() + displacements[r], counts[r],
                  (*all)[static_cast<size_t>(r)].data() + offset);
    }
  }
  return true;
}

// Rank 0's size, then its bytes in pieces of at most max_bytes_per_call().
bool broadcast(std::string* blob, std::string* error) {
  std::int64_t length = static_cast<std::int64_t>(blob->size());
  if (int rc = MPI_Bcast(&length, 1, MPI_INT64_T, 0, MPI_COMM_WORLD); rc != MPI_SUCCESS) {
    return mpi_failed("MPI_Bcast (blob size)", rc, error);
  }
  blob->resize(static_cast<size_t>(length));
  const std::int64_t chunk = max_bytes_per_call();
  for (std::int64_t offset = 0; offset < length; offset += chunk) {
    const int count = static_cast<int>(std::min(chunk, length - offset));
    if (int rc = MPI_Bcast(blob->data() + offset, count, MPI_BYTE, 0, MPI_COMM_WORLD);
        rc != MPI_SUCCESS) {
      return mpi_failed("MPI_Bcast", rc, error);
    }
  }
  return true;
}

}  // namespace
}  // namespace llmplan::planner

extern "C" __attribute__((visibility("default"))) const llmplan::planner::MpiModule*
llmplan_mpi_module() {
  static const llmplan::planner::MpiModule module{
      llmplan::planner::kMpiModuleAbi, &llmplan::planner::join, &llmplan::planner::leave,
      &llmplan::planner::all_gather, &llmplan::planner::broadcast};
  return &module;
}

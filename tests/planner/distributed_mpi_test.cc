// A standalone test of planner/study/distributed.h under a real MPI launcher
// (registered by tests/planner/mpi_tests.cmake only when MPI is built in):
//   mpirun -n N distributed_mpi_test N     every rank checks the collectives
//   distributed_mpi_test 1                 no launcher: a group of one
// Not part of llmplan_tests: MPI collectives need every rank of a launched
// job. Prints one line per rank; exits 1 with the first failed check.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "planner/study/distributed.h"

namespace {

using llmplan::planner::ProcessGroup;

int failures = 0;

void check(bool ok, const ProcessGroup& g, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "rank %d of %d: FAILED: %s\n", g.rank, g.size, what.c_str());
  ++failures;
}

// The blob rank `rank` contributes in round `round`: uneven lengths (rank 1
// and, in round 1, every rank's are empty), bytes that name their origin,
// zero bytes included.
std::string blob_of(int rank, int round) {
  if (round == 1 || rank == 1) return "";
  const size_t length = static_cast<size_t>(rank) * 1009 + static_cast<size_t>(round) * 7 + 3;
  std::string b(length, '\0');
  for (size_t i = 0; i < length; ++i) b[i] = static_cast<char>((i * 31 + rank * 17 + round) % 256);
  return b;
}

void check_all_gather(const ProcessGroup& g, int round) {
  auto all = llmplan::planner::all_gather(g, blob_of(g.rank, round));
  if (!all.ok()) {
    check(false, g, "all_gather: " + all.status().message());
    return;
  }
  check(static_cast<int>(all.value().size()) == g.size, g,
        "all_gather returned " + std::to_string(all.value().size()) + " blobs");
  for (int r = 0; r < static_cast<int>(all.value().size()); ++r) {
    check(all.value()[static_cast<size_t>(r)] == blob_of(r, round), g,
          "all_gather round " + std::to_string(round) + ": rank " + std::to_string(r) +
              "'s blob differs (" + std::to_string(all.value()[static_cast<size_t>(r)].size()) +
              " bytes, expected " + std::to_string(blob_of(r, round).size()) + ")");
  }
}

void check_broadcast(const ProcessGroup& g, const std::string& root_blob) {
  // Other ranks pass blobs of other lengths: only rank 0's counts.
  const std::string mine = g.rank == 0 ? root_blob : std::string(static_cast<size_t>(g.rank) * 5, 'x');
  auto got = llmplan::planner::broadcast_from_root(g, mine);
  if (!got.ok()) {
    check(false, g, "broadcast_from_root: " + got.status().message());
    return;
  }
  check(got.value() == root_blob, g,
        "broadcast_from_root gave " + std::to_string(got.value().size()) + " bytes, expected " +
            std::to_string(root_blob.size()));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: distributed_mpi_test EXPECTED_RANKS\n");
    return 2;
  }
  const int expected = std::atoi(argv[1]);
  auto joined = llmplan::planner::join_process_group();
  if (!joined.ok()) {
    std::fprintf(stderr, "join_process_group: %s\n", joined.status().message().c_str());
    return 1;
  }
  const ProcessGroup g = joined.value();
  check(g.size == expected, g, "size " + std::to_string(g.size) + ", expected " + argv[1]);
  check(g.rank >= 0 && g.rank < g.size, g, "rank out of range");
  check(g.mpi == llmplan::planner::launched_by_mpi(), g, "mpi flag differs from launched_by_mpi()");
  check(!g.mpi || llmplan::planner::built_with_mpi(), g, "joined through MPI in a build without");
  for (int round = 0; round < 3; ++round) check_all_gather(g, round);
  check_broadcast(g, blob_of(0, 2));
  check_broadcast(g, "");
  check_broadcast(g, std::string("a\0b", 3));
  // A blob far larger than one message of the transports' eager protocol
  // (a few KiB), yet small enough for the split test's thousands of rounds
  // and for ASan's full stacks on every allocation.
  std::string large(50000, '\0');
  for (size_t i = 0; i < large.size(); ++i) large[i] = static_cast<char>(i % 251);
  check_broadcast(g, large);
  auto big = llmplan::planner::all_gather(g, g.rank == 0 ? large : blob_of(g.rank, 0));
  check(big.ok() && big.value()[0] == large, g, "all_gather of a large blob");
  llmplan::planner::leave_process_group(g);
  llmplan::planner::leave_process_group(g);  // a second leave does nothing
  if (failures == 0) std::printf("rank %d of %d (mpi %s): ok\n", g.rank, g.size, g.mpi ? "yes" : "no");
  return failures == 0 ? 0 : 1;
}

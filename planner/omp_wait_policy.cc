// Threads that wait without spinning: OMP_WAIT_POLICY=PASSIVE for every
// run of the program this file is linked into, unless the user set the
// variable (OMP_WAIT_POLICY=ACTIVE still gets libgomp's spinning; an empty
// value counts as unset).
//
// Why: libgomp's default lets a thread that waits for work, or at the
// barrier closing a parallel region, spin for a while before it sleeps.
// On a machine whose other cores are busy, that spinning thread takes the
// CPU from the thread doing the work: with one of 2 cores busy, a
// one-plan sweep on 2 threads took twice as long as on 1. A passive waiter
// sleeps at once (futex) and is woken when work comes.
//
// When: libgomp reads its environment once, in a constructor of
// libgomp.so that runs before main(), so setenv() in main would be too
// late. Functions in an executable's .preinit_array run before the
// constructors of any shared library (System V ABI; glibc's ld.so calls
// them first), so that is where this one goes. It only works when linked
// into an executable (an OBJECT library, so the linker keeps this file).
#include <cstdlib>

namespace {

void passive_omp_wait_policy(int, char**, char**) {
  const char* set = std::getenv("OMP_WAIT_POLICY");
  if (set == nullptr || *set == '\0') setenv("OMP_WAIT_POLICY", "PASSIVE", /*overwrite=*/1);
}

__attribute__((section(".preinit_array"), used)) void (*passive_omp_wait_entry)(
    int, char**, char**) = &passive_omp_wait_policy;

}  // namespace

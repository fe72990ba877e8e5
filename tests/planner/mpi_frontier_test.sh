#!/usr/bin/env bash
# CTest (registered by tests/planner/mpi_tests.cmake when MPI is built in):
# `mpirun -n N llmplan frontier ...` writes byte-identical files to the same
# study run in one process, for 2 and 3 ranks (3 ranks with 2 threads each
# on a 2-core machine: more workers than cores, and rounds with fewer
# simulations than ranks, whose idle ranks must still take part and exit 0),
# and whatever the thread count. Every run has the same command line
# (the report quotes it), `--out study` in a folder of its own; threads vary
# through OMP_NUM_THREADS.
#
# Usage: mpi_frontier_test.sh LLMPLAN MPIRUN
set -euo pipefail
llmplan=$1 mpirun=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
# A small grid (a few seconds): 2 GPUs x 2 counts x 2 deadlines.
# --progress: the log says how many processes shared the work.
grid=(frontier --gpus 8,16 --days 0.5,1 --gpu a100-80gb,h100-sxm --tp 1,2 --pp 1 --progress)

# run NAME COMMAND...: runs COMMAND in the new folder NAME; its stdout and
# stderr go to NAME.log; fails the test, showing the log, unless it exits 0.
run() {
  local name=$1
  shift
  local status=0
  mkdir "$name"
  (cd "$name" && "$@") > "$name.log" 2>&1 || status=$?
  if ((status != 0)); then
    echo "error: '$*' exited $status:" >&2
    cat "$name.log" >&2
    exit 1
  fi
}

# same NAME: NAME/study's files equal single/study's, byte for byte.
same() {
  if ! diff -r single/study "$1/study" > "$1.diff"; then
    echo "error: $1/ differs from the single-process run:" >&2
    head -n 40 "$1.diff" >&2
    exit 1
  fi
}

OMP_NUM_THREADS=1 run single "$llmplan" "${grid[@]}" --out study
for f in frontier.csv frontier.json frontier.md; do
  [[ -s single/study/$f ]] || { echo "error: the single-process run wrote no $f" >&2; exit 1; }
done
OMP_NUM_THREADS=2 run threads2 "$llmplan" "${grid[@]}" --out study
same threads2
OMP_NUM_THREADS=1 run mpi2 "$mpirun" -n 2 --oversubscribe "$llmplan" "${grid[@]}" --out study
same mpi2
grep -q '(2 processes)' mpi2.log || { echo "error: mpirun -n 2 did not split the work:" >&2; cat mpi2.log >&2; exit 1; }
OMP_NUM_THREADS=2 run mpi3 "$mpirun" -n 3 --oversubscribe "$llmplan" "${grid[@]}" --out study
same mpi3
grep -q '(3 processes)' mpi3.log || { echo "error: mpirun -n 3 did not split the work:" >&2; cat mpi3.log >&2; exit 1; }
echo "mpirun -n 2 and -n 3 (1 and 2 threads a rank) wrote the single-process run's files:" \
     "$(cd single/study && ls | tr '\n' ' ')"

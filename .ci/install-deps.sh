#!/usr/bin/env bash
# Installs llmplan's build dependencies from Debian packages (run as root).
# CUDA (for the optional profiler) comes with the machine image under
# /usr/local/cuda; everything else is here. libboost-json1.81-dev replaces
# Debian's Boost 1.74 development headers; that is expected.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
packages=(cmake ninja-build g++ libboost-json1.81-dev libceres-dev libcli11-dev libfmt-dev
          libgtest-dev libgmock-dev libbenchmark-dev
          libopenmpi-dev openmpi-bin  # optional MPI (LLMPLAN_MPI): mpirun -n N llmplan frontier
          help2man dpkg-dev file  # man pages; cpack -G DEB (dpkg-shlibdeps, file)
          python3 python3-jsonschema  # tests: result.json against its schema
          universal-ctags  # tests/house/sizes_test.sh: function lengths
          # Fuzzing (tests/fuzz): clang with libFuzzer and the sanitizer
          # runtimes, OpenMP for clang, llvm-symbolizer for stack traces.
          clang libclang-rt-dev libomp-dev llvm)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

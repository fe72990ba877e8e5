#!/usr/bin/env bash
# The golden set: byte-identical outputs across refactors (CTest label `golden`,
# tests/CMakeLists.txt).
#
#   golden_test.sh check  SOURCE_DIR LLMPLAN [NAME ...]
#   golden_test.sh update SOURCE_DIR LLMPLAN [NAME ...]
#
# Runs every command of SOURCE_DIR/tests/golden/commands.txt (or only the NAMEs
# given) with the llmplan binary LLMPLAN, each in a fresh scratch folder holding
# a link `data` to SOURCE_DIR/data, a link `files` to tests/golden/files (inputs
# written for this set) and an empty folder `out`. A command's golden
# output is its exit status, its stdout, its stderr and every file it wrote
# under out/ (sorted by path), concatenated with headers; the version line
# (`llmplan 0.1.0 (git 1a74dba)`, which names the commit) and the run's own
# wall-clock timings are replaced by placeholders (normalise below). `check` compares each with
# SOURCE_DIR/tests/golden/expected/NAME.txt byte for byte and prints a diff of
# the first lines that differ; `update` rewrites the expected files (only do
# that for a change that is meant to alter outputs, and say so in the commit).
# Exit 0 when every command matches, 1 otherwise, 2 on a usage error.
set -uo pipefail

usage() {
  echo "usage: $0 check|update SOURCE_DIR LLMPLAN [NAME ...]" >&2
  exit 2
}
(($# >= 3)) || usage
mode=$1
[[ $mode == check || $mode == update ]] || usage
src=$(cd "$2" && pwd) || exit 2
llmplan=$(cd "$(dirname "$3")" && pwd)/$(basename "$3") || exit 2
[[ -x $llmplan ]] || { echo "error: $3 is not an executable" >&2; exit 2; }
shift 3
commands="$src/tests/golden/commands.txt"
expected_dir="$src/tests/golden/expected"
[[ -f $commands ]] || { echo "error: $commands does not exist" >&2; exit 2; }

declare -A wanted=()
for name in "$@"; do wanted[$name]=1; done

scratch=$(mktemp -d "${TMPDIR:-/tmp}/llmplan_golden.XXXXXX") || exit 2
trap 'rm -rf "$scratch"' EXIT

# Replaces what legitimately differs between runs, and nothing else: the
# version line's commit (and -dirty), and the wall-clock timings of the run
# itself (schedule's `curves_wall_s`, `policies_wall_s`, "simulated in 5.8 s";
# validate's "21.6 s per fold").
normalise() {
  sed -E -e 's/llmplan [0-9]+\.[0-9]+\.[0-9]+ \(git [^)]*\)/llmplan VERSION (git COMMIT)/g' \
         -e 's/("(curves|policies)_wall_s": )[-+0-9.eE]+/\1WALL/g' \
         -e 's/simulated in [0-9.]+ s/simulated in WALL s/g' \
         -e 's/[0-9.]+ s per fold/WALL s per fold/g' "$1"
}

# Writes the golden output of one command (its arguments after the name) to $1.
golden_output() {
  local result=$1 dir=$2
  shift 2
  mkdir -p "$dir/out"
  ln -s "$src/data" "$dir/data"
  ln -s "$src/tests/golden/files" "$dir/files"
  (cd "$dir" && exec "$llmplan" "$@" >stdout 2>stderr </dev/null)
  local status=$?
  {
    echo "== exit $status"
    echo "== stdout"
    normalise "$dir/stdout"
    echo "== stderr"
    normalise "$dir/stderr"
    local f
    while IFS= read -r f; do
      echo "== file ${f#./}"
      normalise "$dir/$f"
    done < <(cd "$dir" && find out -type f | LC_ALL=C sort)
  } >"$result"
}

failed=0 ran=0
while IFS= read -r line; do
  [[ -z ${line//[[:space:]]/} || $line == \#* ]] && continue
  read -r -a words <<<"$line"
  name=${words[0]}
  if ((${#wanted[@]})) && [[ -z ${wanted[$name]:-} ]]; then continue; fi
  ran=$((ran + 1))
  result="$scratch/$name.txt"
  start=$SECONDS
  golden_output "$result" "$scratch/$name" "${words[@]:1}"
  if [[ $mode == update ]]; then
    mkdir -p "$expected_dir"
    cp "$result" "$expected_dir/$name.txt"
    echo "updated $name ($((SECONDS - start)) s)"
  elif [[ ! -f $expected_dir/$name.txt ]]; then
    echo "FAIL $name: no expected output tests/golden/expected/$name.txt (run update)"
    failed=$((failed + 1))
  elif cmp -s "$result" "$expected_dir/$name.txt"; then
    echo "ok   $name ($((SECONDS - start)) s)"
  else
    echo "FAIL $name: output differs from tests/golden/expected/$name.txt (diff expected actual):"
    diff "$expected_dir/$name.txt" "$result" | head -n 40
    failed=$((failed + 1))
  fi
done <"$commands"

for name in "${!wanted[@]}"; do
  grep -Eq "^$name[[:space:]]" "$commands" || { echo "error: no command named $name" >&2; exit 2; }
done
((ran > 0)) || { echo "error: no command ran" >&2; exit 1; }
echo "$((ran - failed)) passed, $failed failed"
((failed == 0))

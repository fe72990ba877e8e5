#!/usr/bin/env bash
# Keeps the top-level README honest (CTest label `readme`, tests/CMakeLists.txt).
#
#   readme_examples_test.sh --check-files SOURCE_DIR
#     Every fenced block that the README introduces with a line
#     `<!-- file: PATH -->` must equal SOURCE_DIR/PATH byte for byte, and
#     every ```json and ```csv block must be so introduced: an example input
#     the README shows inline is a real file that the examples use.
#
#   readme_examples_test.sh --run SOURCE_DIR LLMPLAN_DIR [PROFILE_DIR]
#     Runs every command line of the README's ```sh blocks that starts with
#     `llmplan ` or `llmplan-profile ` (backslash continuations joined), each
#     with bash in a fresh temporary folder holding a link `data` to
#     SOURCE_DIR/data (the README's commands are written for the repository
#     root), with LLMPLAN_DIR and PROFILE_DIR first on PATH, under a timeout
#     of README_COMMAND_TIMEOUT_S seconds (default 600: under ASan+UBSan the H100 planner example, FP8 and BF16 plans, takes about 5 min on 2 cores). Each must exit 0;
#     a failure prints the command, its exit status and its stderr.
#     llmplan-profile lines are skipped, with a message, when PROFILE_DIR is
#     not given (not built) or the command reports that no CUDA GPU is
#     visible (exit 3). Finding no command at all is a failure.
set -uo pipefail

usage() {
  echo "usage: $0 --check-files SOURCE_DIR | --run SOURCE_DIR LLMPLAN_DIR [PROFILE_DIR]" >&2
  exit 2
}
(($# >= 2)) || usage
mode=$1
src=$(cd "$2" && pwd) || exit 2
readme="$src/README.md"
[[ -f "$readme" ]] || { echo "error: $readme does not exist" >&2; exit 2; }

check_files() {
  local blocks
  blocks=$(mktemp -d "${TMPDIR:-/tmp}/readme_blocks.XXXXXX") || exit 2
  # Writes each marked block to $blocks/N and "N<TAB>PATH<TAB>LINE" to
  # $blocks/index; reports unmarked json/csv blocks and stray markers.
  awk -v dir="$blocks" '
    function fail(msg) { print "README.md:" NR ": " msg > "/dev/stderr"; bad = 1 }
    in_block {
      if ($0 ~ /^```[ \t]*$/) { in_block = 0; if (out != "") close(out); out = ""; next }
      if (out != "") printf "%s\n", $0 > out
      next
    }
    /^<!-- file: [^ ]+ -->[ \t]*$/ {
      if (pending != "") fail("marker for " pending " is not followed by a code block")
      pending = $3; pending_line = NR; next
    }
    /^```/ {
      in_block = 1; lang = substr($0, 4); sub(/[ \t].*$/, "", lang)
      if (pending != "") {
        n++; out = dir "/" n
        printf "" > out
        printf "%d\t%s\t%d\n", n, pending, pending_line > (dir "/index")
        pending = ""
      } else if (lang == "json" || lang == "csv") {
        fail("```" lang " block has no <!-- file: data/examples/... --> line before it")
      }
      next
    }
    {
      if (pending != "" && $0 !~ /^[ \t]*$/) {
        fail("marker for " pending " is not followed by a code block"); pending = ""
      }
    }
    END {
      if (in_block) fail("unterminated code block")
      if (pending != "") fail("marker for " pending " is not followed by a code block")
      exit bad
    }' "$readme"
  local status=$? checked=0
  if [[ -f "$blocks/index" ]]; then
    while IFS=$'\t' read -r n path line; do
      if [[ ! -f "$src/$path" ]]; then
        echo "README.md:$line: $path does not exist" >&2
        status=1
      elif ! cmp -s "$blocks/$n" "$src/$path"; then
        echo "README.md:$line: the block differs from $path (diff README block vs file):" >&2
        diff "$blocks/$n" "$src/$path" >&2
        status=1
      else
        echo "ok: README block at line $line equals $path"
      fi
      checked=$((checked + 1))
    done <"$blocks/index"
  fi
  rm -rf "$blocks"
  if ((checked == 0)); then
    echo "error: found no <!-- file: PATH --> block in $readme" >&2
    status=1
  fi
  exit "$status"
}

run_commands() {
  local llmplan_dir=$1 profile_dir=${2:-}
  local timeout_s=${README_COMMAND_TIMEOUT_S:-600}
  if [[ ! -x "$llmplan_dir/llmplan" ]]; then
    echo "error: $llmplan_dir/llmplan is not an executable (build the llmplan target)" >&2
    exit 2
  fi
  # The commands run elsewhere: make the folders absolute.
  llmplan_dir=$(cd "$llmplan_dir" && pwd) || exit 2
  if [[ -n "$profile_dir" ]]; then profile_dir=$(cd "$profile_dir" && pwd) || exit 2; fi
  local path_dirs="$llmplan_dir"
  [[ -n "$profile_dir" ]] && path_dirs="$profile_dir:$path_dirs"

  local commands=()
  mapfile -t commands < <(awk '
    /^```/ {
      if (in_block) { in_block = 0; next }
      in_block = 1; is_sh = ($0 ~ /^```(sh|bash|shell|console)[ \t]*$/); next
    }
    in_block && is_sh {
      line = $0
      if (joined != "") { line = joined line; joined = "" }
      if (line ~ /\\$/) { joined = substr(line, 1, length(line) - 1); next }
      if (line ~ /^(llmplan|llmplan-profile)[ \t]/) print line
    }' "$readme")
  if ((${#commands[@]} == 0)); then
    echo "error: found no llmplan command in the sh blocks of $readme" >&2
    exit 1
  fi

  local failed=0 passed=0 skipped=0 cmd work rc start elapsed
  for cmd in "${commands[@]}"; do
    if [[ "$cmd" == llmplan-profile* && -z "$profile_dir" ]]; then
      echo "skipped (llmplan-profile is not built): $cmd"
      skipped=$((skipped + 1))
      continue
    fi
    work=$(mktemp -d "${TMPDIR:-/tmp}/readme_example.XXXXXX") || exit 2
    ln -s "$src/data" "$work/data"
    start=$SECONDS
    (cd "$work" && PATH="$path_dirs:$PATH" timeout "$timeout_s" bash -c "$cmd" \
       >"$work/.stdout" 2>"$work/.stderr")
    rc=$?
    elapsed=$((SECONDS - start))
    if ((rc == 0)); then
      echo "ok (${elapsed} s): $cmd"
      passed=$((passed + 1))
    elif [[ "$cmd" == llmplan-profile* ]] && ((rc == 3)) &&
         grep -q "no CUDA GPU is visible" "$work/.stderr"; then
      echo "skipped (no CUDA GPU is visible): $cmd"
      skipped=$((skipped + 1))
    else
      if ((rc == 124)); then
        echo "FAILED (timed out after ${timeout_s} s): $cmd"
      else
        echo "FAILED (exit $rc after ${elapsed} s): $cmd"
      fi
      echo "--- stderr:"
      cat "$work/.stderr"
      echo "---"
      failed=$((failed + 1))
    fi
    rm -rf "$work"
  done
  echo "README commands: $passed passed, $failed failed, $skipped skipped"
  ((failed == 0)) || exit 1
  ((passed > 0)) || { echo "error: no README command ran" >&2; exit 1; }
}

case "$mode" in
  --check-files) (($# == 2)) || usage; check_files ;;
  --run) (($# == 3 || $# == 4)) || usage; run_commands "$3" "${4:-}" ;;
  *) usage ;;
esac

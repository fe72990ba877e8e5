#!/usr/bin/env bash
# Keeps the manual honest: README.md and every docs/*.md (CTest label
# `readme`, tests/CMakeLists.txt). A failure names the .md file and line.
#
#   readme_examples_test.sh --check-files SOURCE_DIR
#     Every fenced block that a page introduces with a line
#     `<!-- file: PATH -->` must equal SOURCE_DIR/PATH byte for byte, and
#     every ```json and ```csv block must be so introduced: an example input
#     a page shows inline is a real file that the examples use.
#
#   readme_examples_test.sh --run SOURCE_DIR LLMPLAN_DIR [PROFILE_DIR]
#     Runs every command line of the pages' ```sh blocks that starts with
#     `llmplan ` or `llmplan-profile ` (backslash continuations joined), each
#     with bash in a fresh temporary folder holding a link `data` to
#     SOURCE_DIR/data (the commands are written for the repository
#     root), with LLMPLAN_DIR and PROFILE_DIR first on PATH, under a timeout
#     of README_COMMAND_TIMEOUT_S seconds (default 600: under ASan+UBSan the H100 planner example, FP8 and BF16 plans, takes about 5 min on 2 cores). Each must exit 0;
#     a failure prints the page and line, the command, its exit status and
#     its stderr. A command shown on several pages (the README's "How do I"
#     repeats examples of docs/) runs once. llmplan-profile lines are
#     skipped, with a message, when PROFILE_DIR is not given (not built) or
#     the command reports that no CUDA GPU is visible (exit 3). Finding no
#     command at all is a failure.
set -uo pipefail

usage() {
  echo "usage: $0 --check-files SOURCE_DIR | --run SOURCE_DIR LLMPLAN_DIR [PROFILE_DIR]" >&2
  exit 2
}
(($# >= 2)) || usage
mode=$1
src=$(cd "$2" && pwd) || exit 2
[[ -f "$src/README.md" ]] || { echo "error: $src/README.md does not exist" >&2; exit 2; }
# The pages, relative to SOURCE_DIR: README.md, then docs/*.md in name order.
pages=(README.md)
while IFS= read -r page; do pages+=("${page#"$src"/}"); done < <(
  find "$src/docs" -maxdepth 1 -type f -name '*.md' 2>/dev/null | LC_ALL=C sort)

check_files() {
  local blocks status=0 checked=0 page n path line
  blocks=$(mktemp -d "${TMPDIR:-/tmp}/readme_blocks.XXXXXX") || exit 2
  for page in "${pages[@]}"; do
    # Writes each marked block to $blocks/N and "N<TAB>PATH<TAB>LINE" to
    # $blocks/index; reports unmarked json/csv blocks and stray markers.
    rm -f "$blocks"/*
    awk -v dir="$blocks" -v page="$page" '
      function fail(msg) { print page ":" NR ": " msg > "/dev/stderr"; bad = 1 }
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
      }' "$src/$page" || status=1
    [[ -f "$blocks/index" ]] || continue
    while IFS=$'\t' read -r n path line; do
      if [[ ! -f "$src/$path" ]]; then
        echo "$page:$line: $path does not exist" >&2
        status=1
      elif ! cmp -s "$blocks/$n" "$src/$path"; then
        echo "$page:$line: the block differs from $path (diff $page block vs file):" >&2
        diff "$blocks/$n" "$src/$path" >&2
        status=1
      else
        echo "ok: $page block at line $line equals $path"
      fi
      checked=$((checked + 1))
    done <"$blocks/index"
  done
  rm -rf "$blocks"
  if ((checked == 0)); then
    echo "error: found no <!-- file: PATH --> block in ${pages[*]}" >&2
    status=1
  fi
  echo "pages checked: ${#pages[@]}; file blocks: $checked"
  exit "$status"
}

# Prints "PAGE:LINE<TAB>COMMAND" for every llmplan command of a page's sh
# blocks (LINE: the command's first line; continuations joined).
page_commands() {
  awk -v page="$1" '
    /^```/ {
      if (in_block) { in_block = 0; next }
      in_block = 1; is_sh = ($0 ~ /^```(sh|bash|shell|console)[ \t]*$/); next
    }
    in_block && is_sh {
      line = $0
      if (joined != "") { line = joined line; joined = "" } else { first = NR }
      if (line ~ /\\$/) { joined = substr(line, 1, length(line) - 1); next }
      if (line ~ /^(llmplan|llmplan-profile)[ \t]/) printf "%s:%d\t%s\n", page, first, line
    }' "$src/$1"
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

  # Every command once, in page order, with every place it is shown.
  local -A where=()
  local commands=() entry place cmd page total=0
  for page in "${pages[@]}"; do
    while IFS=$'\t' read -r place cmd; do
      total=$((total + 1))
      if [[ -z "${where[$cmd]+set}" ]]; then
        commands+=("$cmd")
        where[$cmd]=$place
      else
        where[$cmd]+=", $place"
      fi
    done < <(page_commands "$page")
  done
  if ((${#commands[@]} == 0)); then
    echo "error: found no llmplan command in the sh blocks of ${pages[*]}" >&2
    exit 1
  fi
  echo "commands: $total in ${#pages[@]} pages, ${#commands[@]} distinct (each runs once)"

  local failed=0 passed=0 skipped=0 work rc start elapsed
  for cmd in "${commands[@]}"; do
    if [[ "$cmd" == llmplan-profile* && -z "$profile_dir" ]]; then
      echo "skipped (llmplan-profile is not built): ${where[$cmd]}: $cmd"
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
      echo "ok (${elapsed} s): ${where[$cmd]}: $cmd"
      passed=$((passed + 1))
    elif [[ "$cmd" == llmplan-profile* ]] && ((rc == 3)) &&
         grep -q "no CUDA GPU is visible" "$work/.stderr"; then
      echo "skipped (no CUDA GPU is visible): ${where[$cmd]}: $cmd"
      skipped=$((skipped + 1))
    else
      if ((rc == 124)); then
        echo "FAILED (timed out after ${timeout_s} s): ${where[$cmd]}: $cmd"
      else
        echo "FAILED (exit $rc after ${elapsed} s): ${where[$cmd]}: $cmd"
      fi
      echo "--- stderr:"
      cat "$work/.stderr"
      echo "---"
      failed=$((failed + 1))
    fi
    rm -rf "$work"
  done
  echo "README and docs/ commands: $passed passed, $failed failed, $skipped skipped"
  ((failed == 0)) || exit 1
  ((passed > 0)) || { echo "error: no README or docs/ command ran" >&2; exit 1; }
}

case "$mode" in
  --check-files) (($# == 2)) || usage; check_files ;;
  --run) (($# == 3 || $# == 4)) || usage; run_commands "$3" "${4:-}" ;;
  *) usage ;;
esac

#!/usr/bin/env bash
# Process-level regression cases for the `llmplan` executable.
#
#   run_cases.sh LLMPLAN JSON_CHECK CASES_DIR [FILE.cases ...]
#
# Runs `LLMPLAN` once per case of every CASES_DIR/*.cases file (or only the
# files named), each under its own time limit, and checks what only shows at
# process level: the exit status, stderr, hangs and signals. JSON_CHECK is
# the llmplan_json_check tool (tests/cli/json_check.cc). CTest runs it as
# `cli.cases`; by hand, from a build directory:
#   bash ../tests/cli/run_cases.sh planner/llmplan tests/llmplan_json_check ../tests/cli
#
# Case files: one case per line; blank lines and lines whose first non-blank
# character is # are ignored. A case has three fields separated by " | ":
#
#   CHECKS | STDERR_REGEX | ARGUMENTS
#
# (the first two '|' separate the fields; spaces around them do not matter)
#
#   CHECKS        space-separated words, any order:
#                   EXIT n     the exit status must be n (required): 0 success,
#                              1 runtime or input error, 2 usage error
#                   JSON       stdout must be one valid JSON document whose
#                              numbers are all finite (no NaN, no infinity)
#                   QUIET      stderr must be empty
#                   TIMEOUT s  this case's time limit in seconds (default
#                              $LLMPLAN_CASE_TIMEOUT, else 60)
#                   STDOUT_FULL  stdout is /dev/full (a disk with no room):
#                              every write to it fails
#                   FULL_LINK p  @TMP@/p is made a symbolic link to /dev/full
#                              before the run (an output file that cannot be
#                              written, e.g. result.json inside --out DIR)
#   STDERR_REGEX  an extended regular expression (grep -E) that stderr must
#                 match somewhere; empty: no check. A literal | must be
#                 written [|] (| separates the fields). The placeholders
#                 below are replaced here too.
#   ARGUMENTS     the arguments to llmplan, split like a shell command line
#                 by xargs: '...' and "..." quote, nothing is expanded.
#                 Placeholders: @FILES@ is CASES_DIR/files, @TMP@ an empty
#                 scratch directory of this case (also the working directory),
#                 @SRC@ the source tree ($LLMPLAN_SOURCE_DIR, else CASES_DIR/../..).
#
# Always checked, whatever the case says: the run ends within its time limit
# (a timeout is reported as a hang); stderr holds no sanitizer report; and a
# non-zero exit comes with exactly one line on stderr, which starts with
# "llmplan: error: " (a signal, e.g. 134 for an abort, fails that check too).
#
# Example:
#   EXIT 2 | ^llmplan: error: --days: must be a finite number | --gpus 8 --days inf
set -u

if [[ $# -lt 3 ]]; then
  echo "usage: run_cases.sh LLMPLAN JSON_CHECK CASES_DIR [FILE.cases ...]" >&2
  exit 2
fi
llmplan=$(realpath "$1")
json_check=$(realpath "$2")
cases_dir=$(realpath "$3")
shift 3
src_dir=${LLMPLAN_SOURCE_DIR:-$(realpath "$cases_dir/../..")}
default_timeout=${LLMPLAN_CASE_TIMEOUT:-60}

files=("$@")
if [[ ${#files[@]} -eq 0 ]]; then
  shopt -s nullglob
  files=("$cases_dir"/*.cases)
fi
if [[ ${#files[@]} -eq 0 ]]; then
  echo "run_cases.sh: no .cases files in $cases_dir" >&2
  exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/llmplan_cases.XXXXXX")
trap 'rm -rf "$work"' EXIT

total=0
failed=0

# fail FILE LINE REASON: report one failed check of a case.
fail() {
  echo "$1:$2: FAIL: $3"
  case_ok=0
}

trim() {
  local s=$1
  s=${s#"${s%%[![:space:]]*}"}
  s=${s%"${s##*[![:space:]]}"}
  printf '%s' "$s"
}

for file in "${files[@]}"; do
  name=$(basename "$file")
  lineno=0
  while IFS= read -r line || [[ -n $line ]]; do
    lineno=$((lineno + 1))
    stripped=$(trim "$line")
    [[ -z $stripped || $stripped == \#* ]] && continue
    total=$((total + 1))
    case_ok=1

    # Split into the three fields at the first two '|'.
    if [[ $stripped != *"|"*"|"* ]]; then
      fail "$name" "$lineno" "malformed case (want: CHECKS | STDERR_REGEX | ARGUMENTS)"
      failed=$((failed + 1))
      continue
    fi
    checks=${stripped%%"|"*}
    rest=${stripped#*"|"}
    regex=$(trim "${rest%%"|"*}")
    argstr=${rest#*"|"}

    want_exit=""
    want_json=0
    want_quiet=0
    stdout_full=0
    full_links=()
    limit=$default_timeout
    read -r -a words <<< "$checks"
    i=0
    while [[ $i -lt ${#words[@]} ]]; do
      case ${words[$i]} in
        EXIT) want_exit=${words[$((i + 1))]:-}; i=$((i + 2)) ;;
        JSON) want_json=1; i=$((i + 1)) ;;
        QUIET) want_quiet=1; i=$((i + 1)) ;;
        TIMEOUT) limit=${words[$((i + 1))]:-}; i=$((i + 2)) ;;
        STDOUT_FULL) stdout_full=1; i=$((i + 1)) ;;
        FULL_LINK) full_links+=("${words[$((i + 1))]:-}"); i=$((i + 2)) ;;
        *) fail "$name" "$lineno" "unknown check '${words[$i]}'"; i=$((i + 1)) ;;
      esac
    done
    if ! [[ $want_exit =~ ^[0-9]+$ ]]; then
      fail "$name" "$lineno" "EXIT n is required"
    fi
    if ! [[ $limit =~ ^[0-9]+$ ]]; then
      fail "$name" "$lineno" "TIMEOUT needs whole seconds"
      limit=$default_timeout
    fi
    if [[ $case_ok -eq 0 ]]; then
      failed=$((failed + 1))
      continue
    fi

    dir="$work/$name.$lineno"
    mkdir -p "$dir/tmp"
    for link in "${full_links[@]}"; do
      mkdir -p "$(dirname "$dir/tmp/$link")"
      ln -s /dev/full "$dir/tmp/$link"
    done
    argstr=${argstr//@FILES@/$cases_dir/files}
    argstr=${argstr//@TMP@/$dir/tmp}
    argstr=${argstr//@SRC@/$src_dir}
    regex=${regex//@FILES@/$cases_dir/files}
    regex=${regex//@TMP@/$dir/tmp}
    regex=${regex//@SRC@/$src_dir}
    args=()
    if [[ -n $(trim "$argstr") ]]; then
      if ! mapfile -d '' args < <(printf '%s' "$argstr" | xargs -r printf '%s\0'); then
        fail "$name" "$lineno" "cannot split the arguments (unbalanced quotes?)"
        failed=$((failed + 1))
        continue
      fi
    fi

    out_path=$dir/stdout
    [[ $stdout_full -eq 1 ]] && out_path=/dev/full
    start=$(date +%s.%N)
    (cd "$dir/tmp" && timeout --kill-after=10 "$limit" "$llmplan" "${args[@]}" \
      > "$out_path" 2> "$dir/stderr")
    status=$?
    elapsed=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')

    if [[ $status -eq 124 || $status -eq 137 ]]; then
      fail "$name" "$lineno" "no exit within ${limit} s (a hang?)"
    elif [[ $status -ne $want_exit ]]; then
      fail "$name" "$lineno" "exit status $status, want $want_exit"
    fi
    if grep -Eq 'AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:' \
      "$dir/stderr"; then
      fail "$name" "$lineno" "sanitizer report on stderr"
    fi
    if [[ $status -ne 0 && $status -ne 124 && $status -ne 137 ]]; then
      err_lines=$(wc -l < "$dir/stderr")
      if [[ $err_lines -ne 1 ]]; then
        fail "$name" "$lineno" "stderr has $err_lines lines, want exactly one error line"
      elif ! grep -q '^llmplan: error: ' "$dir/stderr"; then
        fail "$name" "$lineno" "stderr does not start with 'llmplan: error: '"
      fi
    fi
    if [[ -n $regex ]] && ! grep -Eq -- "$regex" "$dir/stderr"; then
      fail "$name" "$lineno" "stderr does not match /$regex/"
    fi
    if [[ $want_quiet -eq 1 && -s $dir/stderr ]]; then
      fail "$name" "$lineno" "stderr is not empty"
    fi
    if [[ $want_json -eq 1 ]]; then
      if ! why=$("$json_check" < "$dir/stdout"); then
        fail "$name" "$lineno" "stdout: $why"
      fi
    fi

    if [[ $case_ok -eq 1 ]]; then
      echo "ok   $name:$lineno (${elapsed} s) llmplan ${args[*]}"
    else
      failed=$((failed + 1))
      echo "     llmplan ${args[*]}"
      echo "     --- stderr (first 5 lines):"
      head -n 5 "$dir/stderr" | sed 's/^/     /'
    fi
  done < "$file"
done

echo "$total cases, $failed failed"
[[ $failed -eq 0 ]]

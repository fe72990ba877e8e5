#!/usr/bin/env bash
# CTest: sources the bash completion and checks what it offers for a few
# command lines. Usage: completion_test.sh COMPLETION_FILE LLMPLAN [LLMPLAN_PROFILE]
set -euo pipefail
completion=$1
PATH="$(dirname "$2"):$PATH"
[[ $# -ge 3 ]] && PATH="$(dirname "$3"):$PATH"
export PATH
# shellcheck source=/dev/null
source "$completion"
complete -p llmplan >/dev/null

failures=0
# complete WORD... : runs the completion with the cursor on the last word.
complete_line() {
  COMP_WORDS=("$@")
  COMP_CWORD=$(($# - 1))
  COMP_LINE="$*"
  COMP_POINT=${#COMP_LINE}
  COMPREPLY=()
  _llmplan
}
# expect "WANTED..." -- WORD... : each WANTED is among the completions.
expect() {
  local -a wanted=()
  while [[ $1 != -- ]]; do wanted+=("$1"); shift; done
  shift
  complete_line "$@"
  local w
  for w in "${wanted[@]}"; do
    # Not grep -q: under pipefail, grep leaving early can kill printf (SIGPIPE).
    if ! printf '%s\n' "${COMPREPLY[@]}" | grep -xF -- "$w" >/dev/null; then
      echo "FAIL: '$*' does not offer '$w' (offers: ${COMPREPLY[*]})"
      failures=$((failures + 1))
    fi
  done
}
# expect_only "WANTED..." -- WORD... : the completions are exactly WANTED.
expect_only() {
  local -a wanted=()
  while [[ $1 != -- ]]; do wanted+=("$1"); shift; done
  shift
  complete_line "$@"
  local got want
  got=$(printf '%s\n' "${COMPREPLY[@]}" | sort)
  want=$(printf '%s\n' "${wanted[@]}" | sort)
  if [[ $got != "$want" ]]; then
    echo "FAIL: '$*' offers '${COMPREPLY[*]}', expected '${wanted[*]}'"
    failures=$((failures + 1))
  fi
}
# expect_none WORD... : nothing is offered.
expect_none() {
  complete_line "$@"
  if ((${#COMPREPLY[@]})); then
    echo "FAIL: '$*' offers '${COMPREPLY[*]}', expected nothing"
    failures=$((failures + 1))
  fi
}

expect presets simulate fit optimal validate calibrate sweep schedule -- llmplan ""
expect_only simulate -- llmplan sim
expect_only simulate schedule sweep -- llmplan s
expect --gpus --gpu --days --version -- llmplan --
expect_only --global-batch -- llmplan simulate --global-b
expect --tp --pp --dp --recompute --help -- llmplan simulate --
expect_only none selective full -- llmplan simulate --recompute ""
expect_only md csv json -- llmplan --format ""
expect_only json -- llmplan simulate --format = js
expect_only show -- llmplan presets sh
expect_none llmplan simulate --layers ""   # a number: nothing to offer
expect_none llmplan fit --global-b         # a flag of simulate, not of fit
if command -v llmplan-profile >/dev/null; then
  expect_only --list -- llmplan-profile --li
fi

if ((failures)); then
  echo "$failures completion check(s) failed"
  exit 1
fi
echo "bash completion: all checks passed"

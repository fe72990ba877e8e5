# bash completion for llmplan and llmplan-profile.
#
# Completes subcommands, each (sub)command's flags, the choices of a flag
# whose help lists them (--format TEXT:{md,csv,json}) and file names. All of
# it is read from the programs' own --help at completion time (CLI11 layout:
# "Options:", "Positionals:" and "Subcommands:" sections of "  TERM  TEXT"
# entries), so it cannot fall behind the code. Each help text is read once
# per shell. Needs bash 4; does not need the bash-completion package.

declare -gA _llmplan_help_cache

# Sets _llmplan_text to the --help of the command line "$@" (cached).
_llmplan_help() {
  local key="$*"
  if [[ -z ${_llmplan_help_cache[$key]+set} ]]; then
    _llmplan_help_cache[$key]=$("$@" --help 2>/dev/null)
  fi
  _llmplan_text=${_llmplan_help_cache[$key]}
}

# Reads a help text on stdin and prints, one a line:
#   subcommands        the names under "Subcommands:"
#   positionals        the names under "Positionals:"
#   flags              every spelling of every option (-o, --output)
#   value FLAG         what FLAG takes: "none" (a switch), "choices A B C",
#                      "file" (TEXT, which is often a path) or "value"
_llmplan_parse() {
  awk -v mode="$1" -v flag="${2-}" '
    /^[^ ]/ { section = $0; next }
    !/^  [^ ]/ { next }
    {
      body = substr($0, 3)
      i = index(body, "  ")
      term = i ? substr(body, 1, i - 1) : body
      n = split(term, word, " ")
      if (section == "Subcommands:") { if (mode == "subcommands") print word[1]; next }
      if (section == "Positionals:") { if (mode == "positionals") print word[1]; next }
      if (section != "Options:") next
      m = split(word[1], names, ",")
      for (k = 1; k <= m; k++) {
        if (mode == "flags") print names[k]
        if (mode != "value" || names[k] != flag) continue
        type = (n >= 2 && word[2] ~ /^[A-Z]+(:|$)/) ? word[2] : ""
        if (type == "") print "none"
        else if (type ~ /:\{.*\}$/) {
          sub(/^[^{]*\{/, "", type); sub(/\}$/, "", type); gsub(/,/, " ", type)
          print "choices " type
        } else if (type ~ /^TEXT/) print "file"
        else print "value"
      }
    }'
}

_llmplan() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev="" i word help kind _llmplan_text
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  # "--flag=VAL": bash splits it at "=" into "--flag" "=" "VAL".
  if [[ $cur == "=" ]]; then
    cur=""
  elif [[ $prev == "=" && COMP_CWORD -gt 1 ]]; then
    prev=${COMP_WORDS[COMP_CWORD - 2]}
  fi
  COMPREPLY=()

  # The command so far: the program, then each word before the cursor that
  # names a subcommand of what precedes it ("llmplan presets show").
  local -a command=("${COMP_WORDS[0]}")
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    [[ $word == -* ]] && continue
    _llmplan_help "${command[@]}"
    if _llmplan_parse subcommands <<<"$_llmplan_text" | grep -xF -- "$word" >/dev/null; then
      command+=("$word")
    fi
  done
  _llmplan_help "${command[@]}"
  help=$_llmplan_text
  [[ -n $help ]] || return 0

  if [[ $prev == -* ]]; then
    kind=$(_llmplan_parse value "$prev" <<<"$help")
    case $kind in
      "choices "*)
        mapfile -t COMPREPLY < <(compgen -W "${kind#choices }" -- "$cur")
        return 0
        ;;
      file)
        compopt -o filenames 2>/dev/null || true
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return 0
        ;;
      value) return 0 ;;  # a number: nothing to offer
    esac
  fi

  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_llmplan_parse flags <<<"$help")" -- "$cur")
    return 0
  fi
  mapfile -t COMPREPLY < <(compgen -W "$(_llmplan_parse subcommands <<<"$help")" -- "$cur")
  if [[ -n $(_llmplan_parse positionals <<<"$help") ]]; then
    compopt -o filenames 2>/dev/null || true
    mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "$cur")
  fi
  return 0
}

complete -F _llmplan llmplan llmplan-profile

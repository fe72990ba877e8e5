#!/usr/bin/env bash
# Generates a section-1 man page from a program's own --help and --version
# with help2man, at build time, so the page always matches the binary.
#
# Usage: make_man_page.sh HELP2MAN EXECUTABLE OUTPUT "one-line description"
#
# For a program with subcommands (llmplan), every subcommand's --help, and
# its own subcommands' (`llmplan presets show`), goes into a COMMANDS section
# with one subsection per command, so the page documents every flag. Help
# texts are CLI11's layout: a description, "Usage: ...", then sections such
# as "Options:" whose entries are "  TERM<spaces>DESCRIPTION", long
# descriptions continuing on lines indented past the term column.
set -euo pipefail
help2man=$1 exe=$2 out=$3 description=$4
program=$(basename "$exe")
# Run the program by its bare name so that help texts say "llmplan", not the
# build-tree path.
PATH="$(cd "$(dirname "$exe")" && pwd):$PATH"
export PATH

# The names listed in a help text's "Subcommands:" section, one a line.
subcommands() {
  awk '/^[^ ]/ { in_section = ($0 == "Subcommands:"); next }
       in_section && /^  [^ ]/ { print $1 }'
}

# One command's help text as man(7) roff: a subsection titled with the
# command, its description, usage, then each entry as a tagged paragraph.
help_to_roff() {
  awk -v title="$1" '
    function esc(s) {
      gsub(/\\/, "\\e", s)
      gsub(/-/, "\\-", s)
      if (s ~ /^[.\047[]/) s = "\\&" s   # a request, or a help2man [section]
      return s
    }
    function trim(s) { sub(/^ +/, "", s); sub(/ +$/, "", s); return s }
    { line[NR] = $0 }
    END {
      print ".SS \"" title "\""
      for (n = 1; n <= NR; n++) {
        l = line[n]
        if (l ~ /^Usage: /) { print ".PP"; print "\\fBUsage:\\fR " esc(substr(l, 8)); continue }
        if (l ~ /^[^ ].*:$/) { print ".PP"; print "\\fB" esc(l) "\\fR"; continue }
        if (l == "") continue
        if (l ~ /^   /) { print esc(trim(l)); continue }   # continues the entry above
        if (l !~ /^  [^ ]/) { print esc(l); continue }     # the description
        # An entry. CLI11 pads the term to column 30 and puts the text after
        # it, or on the next lines when the term is longer.
        body = substr(l, 3)
        i = index(body, "  ")
        if (i > 0) {
          term = substr(body, 1, i - 1); text = trim(substr(body, i))
        } else if (length(l) > 30 && substr(l, 30, 1) == " " && line[n + 1] !~ /^   /) {
          term = substr(l, 3, 27); text = trim(substr(l, 31))  # a 27-character term
        } else {
          term = body; text = ""
        }
        term = trim(term)
        j = index(term, " ")
        print ".TP"
        if (j) print "\\fB" esc(substr(term, 1, j - 1)) "\\fR" esc(substr(term, j))
        else print "\\fB" esc(term) "\\fR"
        if (text != "") print esc(text)
      }
    }
  '
}

# Appends the roff of `$@` (a command line) and of its subcommands, depth first.
emit_command() {
  local help sub
  help=$("$@" --help)
  help_to_roff "$*" <<<"$help"
  for sub in $(subcommands <<<"$help"); do
    emit_command "$@" "$sub"
  done
}

include=$(mktemp)
trap 'rm -f "$include" "$out.tmp"' EXIT
options=(--no-info --section=1 "--name=$description" "--output=$out.tmp")
top_subcommands=$("$program" --help | subcommands)
if [[ -n $top_subcommands ]]; then
  {
    echo "[COMMANDS]"
    echo "Each subcommand takes the options listed under it (also shown by"
    echo "\\fB$program\\fR \\fI\\%SUBCOMMAND\\fR \\fB\\-\\-help\\fR)."
    for sub in $top_subcommands; do
      emit_command "$program" "$sub"
    done
  } >"$include"
  options+=("--include=$include")
fi
"$help2man" "${options[@]}" "$program"
mv "$out.tmp" "$out"

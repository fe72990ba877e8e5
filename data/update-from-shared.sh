#!/usr/bin/env bash
# Re-copies the reference data files in data/ from the maintainers' source
# folder, ../shared/data beside the repository root (or the folder given as
# the first argument). Nothing in the project reads that folder: this script
# is the only way its files reach the repository, and the only tracked file
# allowed to name it (.ci/run checks that).
#
# Usage: data/update-from-shared.sh [SOURCE_DATA_DIR]
#
# Idempotent: a file is rewritten only when its bytes differ, a copied folder
# is mirrored (files that left the source are removed), and a second run
# reports "0 changed". The README.md files, data/examples/ and
# data/.gitattributes belong to the repository and are never touched; when a
# source README changes, carry the change over by hand.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="${1:-$repo/../shared/data}"
dest="$repo/data"
if [[ ! -d "$src" ]]; then
  echo "update-from-shared.sh: error: source folder '$src' does not exist (give it as the first argument)" >&2
  exit 2
fi
src="$(cd "$src" && pwd)"

# What is copied, relative to both folders: files and whole folders.
items=(
  vtrain/LICENSE
  vtrain/UPSTREAM_README.md
  vtrain/ground_truth_single.csv
  vtrain/ground_truth_multi.csv
  vtrain/config_example.json
  vtrain/allreduce_lut
  vtrain/case_study_1
  chinchilla/svg_extracted_data.csv
  chinchilla/chinchilla_NDCL_derived.csv
  h100/published_runs.csv
  h100/models.csv
  blackwell/published_runs.csv
)

changed=0
unchanged=0

copy_file() {  # copy_file SRC DST: write DST only when its bytes differ
  if [[ -f "$2" ]] && cmp -s "$1" "$2"; then
    unchanged=$((unchanged + 1))
    return
  fi
  mkdir -p "$(dirname "$2")"
  cp "$1" "$2.tmp.$$"
  chmod 0644 "$2.tmp.$$"
  mv -f "$2.tmp.$$" "$2"
  echo "updated ${2#"$repo"/}"
  changed=$((changed + 1))
}

for item in "${items[@]}"; do
  if [[ -f "$src/$item" ]]; then
    copy_file "$src/$item" "$dest/$item"
  elif [[ -d "$src/$item" ]]; then
    while IFS= read -r -d '' f; do
      copy_file "$src/$item/$f" "$dest/$item/$f"
    done < <(cd "$src/$item" && find . -type f -printf '%P\0' | sort -z)
    # Mirror: drop files that are no longer in the source folder.
    while IFS= read -r -d '' f; do
      if [[ ! -f "$src/$item/$f" ]]; then
        rm -f "$dest/$item/$f"
        echo "removed ${dest#"$repo"/}/$item/$f"
        changed=$((changed + 1))
      fi
    done < <(cd "$dest/$item" && find . -type f -printf '%P\0' | sort -z)
  else
    echo "update-from-shared.sh: error: '$src/$item' is missing from the source" >&2
    exit 1
  fi
done

echo "data/: $changed changed, $unchanged unchanged (from $src)"

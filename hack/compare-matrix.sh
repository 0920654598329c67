#!/usr/bin/env bash
# hack/compare-matrix.sh REPO SPECS [REV_RANGE] [-- SCRIPT]
#
# Compare `patchkit matrix --by build-dir` with a repository's own build
# matrix script over its history: for each commit of REV_RANGE (default: the
# last $MAX first-parent commits of HEAD, MAX=200), both are given the files
# the commit changed, and the script's selection that patchkit misses (a unit
# CI would not rebuild) and patchkit's extra selection are counted.
#
#   REPO       a git checkout of the repository (read only: each commit is
#              checked out into a temporary worktree, removed afterwards)
#   SPECS      a directory holding the repository as adopted (patchkit init
#              run, .patchkit.yaml written): its patchkit.yaml files and
#              .patchkit.yaml are laid over each commit, where their
#              directories exist
#   SCRIPT     the repository's matrix script, relative to REPO
#              (default hack/build-matrix.sh), run with the changed-files list
#
# patchkit is $PATCHKIT, else bin/patchkit of this checkout, else PATH.
# Prints one line per commit where they differ, then a summary; exit 1 when
# patchkit missed a selection the script made at some commit.
set -euo pipefail

if [ $# -lt 2 ]; then
  sed -n '2,20p' "$0" >&2
  exit 2
fi
repo=$(cd "$1" && pwd)
specs=$(cd "$2" && pwd)
shift 2
range=""
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
  range=$1
  shift
fi
script=hack/build-matrix.sh
if [ $# -gt 0 ] && [ "$1" = "--" ]; then
  script=${2:?SCRIPT after --}
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pk=${PATCHKIT:-}
if [ -z "$pk" ] && [ -x "$here/bin/patchkit" ]; then pk=$here/bin/patchkit; fi
if [ -z "$pk" ]; then pk=$(command -v patchkit); fi

if [ -n "$range" ]; then
  commits=$(git -C "$repo" rev-list --first-parent --reverse "$range")
else
  commits=$(git -C "$repo" rev-list --first-parent --reverse -n "${MAX:-200}" HEAD)
fi

tmp=$(mktemp -d)
wt=$tmp/wt
cleanup() {
  git -C "$repo" worktree remove --force "$wt" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
git -C "$repo" worktree add -q --detach "$wt" HEAD

# the adopted specs, relative to SPECS
(cd "$specs" && find . -name patchkit.yaml -not -path './.git/*' -o -name .patchkit.yaml -not -path './.git/*') >"$tmp/specs"

norm() { tr -d '[]" ' | tr ',' '\n' | sed '/^$/d' | sort -u; }

n=0 missed=0 extra=0 missed_commits=0
for c in $commits; do
  parent=$(git -C "$repo" rev-parse -q --verify "$c^" 2>/dev/null) || continue
  git -C "$wt" checkout -q --detach --force "$c"
  git -C "$wt" clean -qfdx
  while read -r f; do
    d=$(dirname "$f")
    if [ -d "$wt/$d" ]; then cp "$specs/$f" "$wt/$f"; fi
  done <"$tmp/specs"
  git -C "$repo" diff --name-only "$parent" "$c" >"$tmp/changed"
  [ -x "$wt/$script" ] || [ -f "$wt/$script" ] || continue
  (cd "$wt" && sh "$script" "$tmp/changed" 2>/dev/null) | norm >"$tmp/theirs" || true
  "$pk" --root "$wt" matrix "$tmp/changed" --by build-dir 2>"$tmp/err" | norm >"$tmp/ours" || true
  n=$((n + 1))
  m=$(comm -23 "$tmp/theirs" "$tmp/ours" | tr '\n' ' ')
  x=$(comm -13 "$tmp/theirs" "$tmp/ours" | tr '\n' ' ')
  if [ -n "$m" ]; then
    missed_commits=$((missed_commits + 1))
    missed=$((missed + $(printf '%s' "$m" | wc -w)))
    printf '%s missed: %s\n' "$(git -C "$repo" rev-parse --short "$c")" "$m"
  fi
  if [ -n "$x" ]; then
    extra=$((extra + $(printf '%s' "$x" | wc -w)))
    printf '%s extra: %s\n' "$(git -C "$repo" rev-parse --short "$c")" "$x"
  fi
done
printf '%d commits compared; %d missed a selection of the script (%d dirs); %d extra dirs selected\n' "$n" "$missed_commits" "$missed" "$extra"
[ "$missed_commits" -eq 0 ]

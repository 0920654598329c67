#!/usr/bin/env bash
# hack/build-matrix.sh [CHANGED_FILES|FULL] [--by build-dir]
#
# Print the JSON array of image units a change must build, e.g.
# ["images/kubeovn"], or []. A CI matrix consumes it:
#
#   git diff --name-only origin/main... > changed.txt
#   hack/build-matrix.sh changed.txt
#
# CHANGED_FILES is a file with one changed path per line (relative to the
# repository root), or - for stdin. No argument, an empty one, or FULL prints
# every unit. The build lines are the `make image IMAGE=<name>` and
# `make -C DIR image` lines of the Makefile's build: target (or the entry
# .patchkit.yaml names); a changed unit that no line builds is exit 1. The
# rules are `patchkit matrix --help`; further arguments (--by build-dir,
# which prints the build lines' directories) go to patchkit matrix.
#
# patchkit is taken from $PATCHKIT, then bin/patchkit, then PATH; in the
# patchkit repository itself it is built from source when none is found.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
arg=${1:-FULL}
[ -n "$arg" ] || arg=FULL

pk=${PATCHKIT:-}
if [ -z "$pk" ] && [ -x "$root/bin/patchkit" ]; then
  pk=$root/bin/patchkit
fi
if [ -z "$pk" ] && command -v patchkit >/dev/null 2>&1; then
  pk=$(command -v patchkit)
fi
if [ -z "$pk" ]; then
  if [ ! -d "$root/cmd/patchkit" ]; then
    echo "build-matrix.sh: no patchkit found: set PATCHKIT or put patchkit on PATH" >&2
    exit 2
  fi
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$root" && CGO_ENABLED=0 go build -o "$tmp/patchkit" ./cmd/patchkit)
  pk=$tmp/patchkit
fi

exec "$pk" --root "$root" matrix "$arg" "${@:2}"

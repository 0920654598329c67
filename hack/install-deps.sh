#!/usr/bin/env bash
# install-deps.sh: the system tools patchkit's tests use, in one list.
#
#   hack/install-deps.sh          install what is missing (needs root and apt-get),
#                                 or say what is missing and how to install it
#   hack/install-deps.sh --check  only say what is missing (exit 2 if anything is)
#
# `make test` runs it first; .ci/run runs it on a fresh Debian 12 machine.
# The tests use the real parts rather than fakes: buildah (daemonless builds,
# chroot isolation, vfs storage), Debian's docker-registry (the CNCF
# distribution registry, started on loopback by the tests), busybox-static
# (the base image the tests make), setcap/getcap (file capabilities), and
# npm for bats-core (tests/bats/package-lock.json pins it).
set -euo pipefail

# One entry per tool: "<command, or absolute path of a file>|<Debian packages>".
# Add a tool here and both `make test` and .ci/run install it.
DEPS=(
  "git|git"
  "make|make"
  "npm|nodejs npm"
  "buildah|buildah"
  "docker-registry|docker-registry"
  "/bin/busybox|busybox-static"
  "getcap|libcap2-bin"
  # GNU time: the benchmarks read peak memory from it; those that assert a
  # memory bound (ColdApplyCheck, ApplyBigPatch, MemoryKubeOVN) fail without it.
  "/usr/bin/time|time"
  # dockerd (with containerd and runc): the docker builder's tests start an
  # engine of their own on a private socket (classic builder, vfs storage).
  "dockerd|docker.io"
  # Headless Chromium: the status page test (internal/cmd/status) renders
  # the html page and checks its tables and SVG chart in a real browser.
  "chromium|chromium"
  # GNU patch: the oracle of internal/chart's patch-mode applier (chart
  # units whose Makefile applies its series with `patch -pN`).
  "patch|patch"
)

# Go-built tools, installed into <repo>/bin/tools with `go install` (the Go
# module proxy; no root needed): "<command>|<module>@<version>".
# mikefarah's yq is the oracle of the stamp golden tests (internal/stamp):
# they compare patchkit's bytes with what `yq -i '.k = strenv(V)'` writes.
# Debian's `yq` package is another tool (a jq wrapper): not that one.
GO_TOOLS=(
  "yq|github.com/mikefarah/yq/v4@v4.54.3"
)
TOOLS_DIR="$(cd "$(dirname "$0")/.." && pwd)/bin/tools"

# go_tools installs (or, with --check, lists) the Go-built tools that are
# missing or at another version.
go_tools() {
  local entry tool mod ver bad=0
  for entry in "${GO_TOOLS[@]}"; do
    tool=${entry%%|*} mod=${entry#*|} ver=${entry##*@}
    if [ -x "$TOOLS_DIR/$tool" ] && "$TOOLS_DIR/$tool" --version 2>/dev/null | grep -qF "$ver"; then
      continue
    fi
    if [ "${1:-}" = "--check" ]; then
      echo "patchkit's tests need $TOOLS_DIR/$tool ($mod). Install it with:  $0" >&2
      bad=1
      continue
    fi
    echo "installing $mod into $TOOLS_DIR" >&2
    GOBIN="$TOOLS_DIR" GOFLAGS=-mod=mod go install "$mod" || { echo "go install $mod failed" >&2; bad=1; }
  done
  return $bad
}
go_failed=0
go_tools "${1:-}" || go_failed=1

present() {
  case $1 in
    /*) [ -x "$1" ] ;;
    # sbin is not on every user's PATH
    *) command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/sbin/$1" ] ;;
  esac
}

missing_tools=()
missing_pkgs=()
for entry in "${DEPS[@]}"; do
  tool=${entry%%|*}
  if ! present "$tool"; then
    missing_tools+=("$tool")
    read -r -a pkgs <<<"${entry#*|}"
    missing_pkgs+=("${pkgs[@]}")
  fi
done

[ ${#missing_tools[@]} -eq 0 ] && exit $((go_failed ? 2 : 0))

say_missing() {
  echo "patchkit's tests need: ${missing_tools[*]} (Debian packages: ${missing_pkgs[*]})." >&2
  echo "Install them with:  sudo $0" >&2
  echo "(or: sudo apt-get install -y ${missing_pkgs[*]})" >&2
}

if [ "${1:-}" = "--check" ]; then
  say_missing
  exit 2
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  say_missing
  exit 2
fi
echo "installing ${missing_pkgs[*]}" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing_pkgs[@]}"

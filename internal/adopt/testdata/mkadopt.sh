#!/bin/sh
# mkadopt.sh ROOT MIRROR: mkmonorepo.sh's monorepo, plus what adopting
# cozystack as it stands meets (issue 22), all generated here:
# - kubeovn's version in four places: ARG TAG (the pin), ARG VERSION (the
#   base image, no v), and its vendored chart's Chart.yaml version and
#   appVersion; its Makefile's update: target filters releases with
#   grep '^v1\.15\.', and its patches keep their provenance in a README
#   instead of headers;
# - cosi, pinned by an abbreviated commit id (COMMIT_REF=<7 hex>) of a
#   GitHub archive URL;
# - gone, whose upstream is in no mirror (fetching it fails);
# - a root Makefile whose build: target builds some packages, not all, and a
#   .patchkit.yaml acknowledging one of those it leaves out.
set -eu
ROOT=$1
MIRROR=$2
sh "$(dirname "$0")/mkmonorepo.sh" "$ROOT" "$MIRROR"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=fixture GIT_AUTHOR_EMAIL=fixture@example.com
export GIT_COMMITTER_NAME=fixture GIT_COMMITTER_EMAIL=fixture@example.com
export GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' GIT_COMMITTER_DATE='2026-01-01T00:00:00Z'

P=packages/system/kubeovn
chart() { # chart DIR: the kube-ovn chart of v1.15.10, as upstream carries it
  mkdir -p "$1"
  cat >"$1/Chart.yaml" <<'YAML'
apiVersion: v2
name: kube-ovn
description: Helm chart for Kube-OVN
type: application
version: v1.15.10
appVersion: "1.15.10"
YAML
  cat >"$1/values.yaml" <<'YAML'
global:
  images:
    kubeovn:
      repository: kube-ovn
      tag: v1.15.10
YAML
}
chart "$ROOT/$P/charts/kube-ovn"
# The upstream carries the chart the package vendors (its update: target
# takes charts/kube-ovn from the release archive): v1.15.10 and v1.15.11 are
# made again with it, so that the chart unit init finds verifies.
d=$MIRROR/kubeovn/kube-ovn
git -C "$d" checkout -q --detach v1.15.10
chart "$d/charts/kube-ovn"
git -C "$d" add -A
git -C "$d" commit -q -m "the kube-ovn chart"
git -C "$d" tag -f -a -m v1.15.10 v1.15.10 >/dev/null
git -C "$d" cherry-pick "v1.15.11^{commit}" >/dev/null
git -C "$d" tag -f -a -m v1.15.11 v1.15.11 >/dev/null
git -C "$d" checkout -q -B main
cat >>"$ROOT/$P/Makefile" <<'MK'

update:
	tag=$$(git ls-remote --tags --sort="v:refname" https://github.com/kubeovn/kube-ovn | awk -F'[/^]' '{print $$3}' | grep '^v1\.15\.' | tail -n1) && \
	curl -sSL https://github.com/kubeovn/kube-ovn/archive/refs/tags/$${tag}.tar.gz | \
	tar -xzf - --strip 1 kube-ovn-$${tag#*v}/charts/kube-ovn
MK
# the patches lose their headers; a README says where each comes from
for f in "$ROOT/$P/images/kubeovn/patches/"*.diff; do
  sed -n '/^diff --git/,$p' "$f" >"$f.tmp" && mv "$f.tmp" "$f"
done
FIX=$(git -C "$MIRROR/kubeovn/kube-ovn" rev-parse "v1.15.11^{commit}")
cat >"$ROOT/$P/images/kubeovn/patches/README.md" <<MD
# kube-ovn patches

- \`0001-retries.diff\`: retry five times; backport of
  https://github.com/kubeovn/kube-ovn/commit/$FIX
- \`0002-timeout.diff\`: a longer timeout for slow nodes; ours, not sent
  upstream.
MD

# cosi: an archive of an abbreviated commit id.
d=$MIRROR/kubernetes-sigs/container-object-storage-interface
mkdir -p "$d/pkg"
git -C "$d" init -q -b main
printf 'package pkg\n\n// Retries is how often it retries.\nconst Retries = 3\n\n// Timeout is in seconds.\nconst Timeout = 10\n' >"$d/pkg/pkg.go"
git -C "$d" add -A
git -C "$d" commit -q -m "initial cosi"
PIN=$(git -C "$d" rev-parse --short=7 HEAD)
sed -i 's/Timeout = 10/Timeout = 12/' "$d/pkg/pkg.go"
git -C "$d" commit -q -am "later work"
U=packages/system/objectstorage/images/cosi
mkdir -p "$ROOT/$U/patches"
git -C "$d" checkout -q "$PIN"
sed -i 's/Retries = 3/Retries = 6/' "$d/pkg/pkg.go"
{
  printf 'Subject: retry six times\nOrigin: vendor\nForwarded: no\n\n'
  git -C "$d" diff
} >"$ROOT/$U/patches/retries.diff"
git -C "$d" checkout -q -- pkg/pkg.go
git -C "$d" checkout -q main
cat >"$ROOT/$U/Dockerfile" <<DF
FROM golang:1.26 AS builder
ARG COMMIT_REF=$PIN
WORKDIR /src
RUN curl -sSL https://github.com/kubernetes-sigs/container-object-storage-interface/archive/\${COMMIT_REF}.tar.gz | tar -xzvf- --strip=1
COPY patches /patches
RUN git apply /patches/*.diff
DF
cat >"$ROOT/packages/system/objectstorage/Makefile" <<'MK'
include ../../../hack/common-envs.mk
image:
	docker buildx build images/cosi $(BUILDX_ARGS)
MK

# gone: an upstream that no mirror holds.
U=packages/system/gone/images/gone
mkdir -p "$ROOT/$U/patches"
cp "$ROOT/packages/system/kamaji/images/kamaji/patches/timeout.diff" "$ROOT/$U/patches/"
cat >"$ROOT/$U/Dockerfile" <<'DF'
FROM golang:1.26 AS builder
ARG VERSION=v0.1.0
RUN git clone --branch ${VERSION} https://github.com/example/gone /src
WORKDIR /src
COPY patches /patches
RUN git apply /patches/*.diff
DF
cat >"$ROOT/packages/system/gone/Makefile" <<'MK'
image:
	docker buildx build images/gone
MK

# The root build: target builds some packages; kilo and cosi and gone are
# left out, and .patchkit.yaml says why kilo is.
cat >"$ROOT/Makefile" <<'MK'
build:
	make -C packages/system/kubeovn image
	make -C packages/system/linstor image
	make -C packages/system/kamaji image
	make -C packages/apps/kubernetes image
MK
cat >"$ROOT/.patchkit.yaml" <<'YAML'
unbuilt:
  - unit: packages/system/kilo/images/kilo
    reason: kilo is built by its own release workflow
YAML

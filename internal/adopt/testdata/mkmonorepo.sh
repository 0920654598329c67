#!/bin/sh
# mkmonorepo.sh ROOT MIRROR: generate a monorepo of cozystack's shape in ROOT
# (packages/<group>/<pkg>/{Makefile,images/<img>/{Dockerfile,patches/}},
# hack/*.mk, a shared values file) and, in MIRROR/<owner>/<repo>, the git
# upstreams its Dockerfiles fetch from https://github.com/<owner>/<repo>.
# Everything is generated here; nothing is copied from cozystack.
set -eu
ROOT=$1
MIRROR=$2
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=fixture GIT_AUTHOR_EMAIL=fixture@example.com
export GIT_COMMITTER_NAME=fixture GIT_COMMITTER_EMAIL=fixture@example.com
export GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' GIT_COMMITTER_DATE='2026-01-01T00:00:00Z'

# upstream OWNER/REPO: a repository with a Go file and a README, one commit.
upstream() {
  d=$MIRROR/$1
  mkdir -p "$d"
  git -C "$d" init -q -b main
  mkdir -p "$d/pkg"
  printf 'package pkg\n\n// Name is the component.\nconst Name = "%s"\n\n// Retries is how often it retries.\nconst Retries = 3\n\n// Mode is the mode.\nconst Mode = "a"\n\n// Level is the level.\nconst Level = 1\n\n// Timeout is in seconds.\nconst Timeout = 10\n' "$1" >"$d/pkg/pkg.go"
  printf '# %s\n' "$1" >"$d/README.md"
  git -C "$d" add -A
  git -C "$d" commit -q -m "initial $1"
}

# release OWNER/REPO TAG: tag the head (annotated).
release() { git -C "$MIRROR/$1" tag -a -m "$2" "$2"; }

# change OWNER/REPO FROM TO MSG: replace a line and commit.
change() {
  sed -i "s/$2/$3/" "$MIRROR/$1/pkg/pkg.go"
  git -C "$MIRROR/$1" commit -q -am "$4"
}

# patch OWNER/REPO FROM TO OUT: the diff of replacing a line, not committed.
mkpatch() {
  mkdir -p "$(dirname "$4")"
  sed -i "s/$2/$3/" "$MIRROR/$1/pkg/pkg.go"
  {
    printf 'Subject: %s\nOrigin: vendor\nForwarded: not-needed\n\n' "set $3"
    git -C "$MIRROR/$1" diff
  } >"$4"
  git -C "$MIRROR/$1" checkout -q -- pkg/pkg.go
}

mkdir -p "$ROOT/hack"
cat >"$ROOT/hack/common-envs.mk" <<'EOF'
REGISTRY ?= ghcr.io/example
IMAGE_TAG ?= latest
BUILDX_ARGS ?=
EOF
cat >"$ROOT/hack/package.mk" <<'EOF'
image-tags = --tag $(REGISTRY)/$(1):$(2)
cache-args = --cache-from type=registry,ref=$(REGISTRY)/$(1):cache
EOF
cat >"$ROOT/hack/versions.mk" <<'EOF'
# Versions shared by several packages.
KAMAJI_VERSION ?= 26.3.6-edge
EOF
mkdir -p "$ROOT/packages/core/platform"
cat >"$ROOT/packages/core/platform/values.yaml" <<'EOF'
# The shared values file every package's image digest is stamped into.
images:
  kubeovn: {repository: kubeovn, tag: v1.15.10}
  piraeus-server: {repository: piraeus-server, tag: 1.33.3}
  linstor-csi: {repository: linstor-csi, tag: v1.11.2}
  kilo: {repository: kilo, tag: latest}
  kamaji: {repository: kamaji, tag: 26.3.6-edge}
EOF

# kubeovn: git clone --branch ${TAG}, the pin is an ARG default; a later
# release carries one of the patches.
upstream kubeovn/kube-ovn
release kubeovn/kube-ovn v1.15.10
U=packages/system/kubeovn/images/kubeovn
mkpatch kubeovn/kube-ovn 'Retries = 3' 'Retries = 5' "$ROOT/$U/patches/0001-retries.diff"
mkpatch kubeovn/kube-ovn 'Timeout = 10' 'Timeout = 30' "$ROOT/$U/patches/0002-timeout.diff"
change kubeovn/kube-ovn 'Retries = 3' 'Retries = 5' "retry five times"
release kubeovn/kube-ovn v1.15.11
cat >"$ROOT/$U/Dockerfile" <<'EOF'
# syntax = docker/dockerfile:experimental
ARG VERSION="1.15.10"
ARG BASE_TAG=v$VERSION

FROM golang:1.26-bookworm as builder

ARG TAG="v1.15.10"
RUN git clone --branch ${TAG} --depth 1 https://github.com/kubeovn/kube-ovn /source

WORKDIR /source

COPY patches /patches
RUN git apply /patches/*.diff
RUN make build-go

FROM kubeovn/kube-ovn-base:$BASE_TAG
COPY --from=builder /source/dist/images/kube-ovn /kube-ovn/kube-ovn
EOF
cat >"$ROOT/packages/system/kubeovn/Makefile" <<'EOF'
KUBEOVN_TAG=$(shell awk '$$1 == "appVersion:" {print $$2}' charts/kube-ovn/Chart.yaml)

export NAME=kubeovn

include ../../../hack/common-envs.mk
include ../../../hack/package.mk

image:
	docker buildx build images/kubeovn \
		$(call image-tags,kubeovn,v$(KUBEOVN_TAG)) \
		--metadata-file images/kubeovn.json \
		$(BUILDX_ARGS)
	ADDRESS="$(REGISTRY)" \
		yq -i '.global.registry.address = strenv(ADDRESS)' values.yaml
	REPOSITORY="kubeovn" \
		yq -i '.global.images.kubeovn.repository = strenv(REPOSITORY)' values.yaml
	TAG="$(IMAGE_TAG)@$$(yq e '."containerimage.digest"' images/kubeovn.json -o json -r)" \
		yq -i '.global.images.kubeovn.tag = strenv(TAG)' values.yaml
	rm -f images/kubeovn.json
EOF
cat >"$ROOT/packages/system/kubeovn/values.yaml" <<'EOF'
global:
  registry:
    address: ghcr.io/cozystack/cozystack
  images:
    kubeovn:
      repository: kubeovn
      # the pre-patch image
      tag: v1.15.10@sha256:1111111111111111111111111111111111111111111111111111111111111111
EOF

# linstor: two images in one Makefile. piraeus-server clones and checks out
# v${VERSION}, VERSION=${LINSTOR_VERSION} from a build-arg of a Makefile
# variable; linstor-csi fetches a tag archive, pinned by a build-arg too,
# and applies with git apply --recount.
upstream LINBIT/linstor-server.git
release LINBIT/linstor-server.git v1.33.3
U=packages/system/linstor/images/piraeus-server
mkpatch LINBIT/linstor-server.git 'Timeout = 10' 'Timeout = 20' "$ROOT/$U/patches/fix-timeout.diff"
cat >"$ROOT/$U/Dockerfile" <<'EOF'
ARG DISTRO=bookworm
ARG LINSTOR_VERSION

FROM debian:$DISTRO AS builder

ARG LINSTOR_VERSION
ARG VERSION=${LINSTOR_VERSION}
ARG DISTRO

RUN apt-get update && apt-get -y install git default-jdk-headless
RUN git clone https://github.com/LINBIT/linstor-server.git /linstor-server
WORKDIR /linstor-server
RUN git checkout v${VERSION}

# Apply patches
COPY patches /patches
RUN git apply /patches/*.diff && \
    git config user.email "build@example.com" && \
    git add -A && \
    git commit -m "Apply patches"
EOF
upstream piraeusdatastore/linstor-csi
release piraeusdatastore/linstor-csi v1.11.2
U=packages/system/linstor/images/linstor-csi
mkpatch piraeusdatastore/linstor-csi 'Retries = 3' 'Retries = 7' "$ROOT/$U/patches/retries.diff"
cat >"$ROOT/$U/Dockerfile" <<'EOF'
FROM golang:1.26 AS builder
ARG VERSION=v1.11.2
ARG TARGETOS
ARG TARGETARCH
WORKDIR /src
RUN curl -sSL https://github.com/piraeusdatastore/linstor-csi/archive/refs/tags/${VERSION}.tar.gz | tar -xzvf- --strip=1

COPY patches /patches
RUN git apply --recount /patches/*.diff

RUN GOOS=$TARGETOS GOARCH=$TARGETARCH CGO_ENABLED=0 go build ./...
EOF
cat >"$ROOT/packages/system/linstor/Makefile" <<'EOF'
export NAME=linstor

include ../../../hack/common-envs.mk
include ../../../hack/package.mk

LINSTOR_VERSION ?= 1.33.3
LINSTOR_CSI_VERSION ?= v1.11.2

image: image-piraeus-server image-linstor-csi

image-piraeus-server:
	docker buildx build images/piraeus-server \
		--build-arg LINSTOR_VERSION=$(LINSTOR_VERSION) \
		--build-arg K8S_AWAIT_ELECTION_VERSION=v0.4.2 \
		$(call image-tags,piraeus-server,$(LINSTOR_VERSION)) \
		$(BUILDX_ARGS)
	REPOSITORY="$(REGISTRY)/piraeus-server" \
		yq -i '.piraeusServer.image.repository = strenv(REPOSITORY)' values.yaml
	DIGEST=$$(cat images/piraeus-server.digest) \
		yq -i '.piraeusServer.image.digest = strenv(DIGEST)' values.yaml

image-linstor-csi:
	docker buildx build images/linstor-csi \
		--build-arg VERSION=$(LINSTOR_CSI_VERSION) \
		$(call image-tags,linstor-csi,$(LINSTOR_CSI_VERSION)) \
		$(BUILDX_ARGS)
EOF

cat >"$ROOT/packages/system/linstor/values.yaml" <<'EOF'
piraeusServer:
  image:
    repository: ghcr.io/cozystack/cozystack/piraeus-server
    digest: sha256:3333333333333333333333333333333333333333333333333333333333333333
EOF

# kilo: an archive of a commit, /archive/${VERSION}.tar.gz.
upstream squat/kilo
KILO=$(git -C "$MIRROR/squat/kilo" rev-parse HEAD)
change squat/kilo 'Timeout = 10' 'Timeout = 11' "later work"
U=packages/system/kilo/images/kilo
git -C "$MIRROR/squat/kilo" checkout -q "$KILO"
mkpatch squat/kilo 'Retries = 3' 'Retries = 4' "$ROOT/$U/patches/retries.diff"
git -C "$MIRROR/squat/kilo" checkout -q main
cat >"$ROOT/$U/Dockerfile" <<EOF
FROM golang:1.26 AS builder
ARG VERSION=$KILO
ARG TARGETOS
ARG TARGETARCH
WORKDIR /src
RUN curl -sSL https://github.com/squat/kilo/archive/\${VERSION}.tar.gz | tar -xzvf- --strip=1

COPY patches /patches
RUN git apply /patches/*.diff
EOF
cat >"$ROOT/packages/system/kilo/Makefile" <<'EOF'
include ../../../hack/common-envs.mk
image:
	docker buildx build images/kilo $(BUILDX_ARGS)
EOF

# kamaji: the pin is a variable of a shared .mk file the Makefile includes.
upstream clastix/kamaji
release clastix/kamaji 26.3.6-edge
U=packages/system/kamaji/images/kamaji
mkpatch clastix/kamaji 'Timeout = 10' 'Timeout = 15' "$ROOT/$U/patches/timeout.diff"
cat >"$ROOT/$U/Dockerfile" <<'EOF'
FROM golang:1.26 AS builder
ARG VERSION
WORKDIR /workspace
RUN curl -sSL https://github.com/clastix/kamaji/archive/refs/tags/${VERSION}.tar.gz | tar -xzvf- --strip=1
COPY patches /patches
RUN git apply /patches/*.diff
EOF
cat >"$ROOT/packages/system/kamaji/Makefile" <<'EOF'
include ../../../hack/common-envs.mk
include ../../../hack/versions.mk

image:
	docker buildx build images/kamaji --build-arg VERSION=$(KAMAJI_VERSION) $(BUILDX_ARGS)
	REPOSITORY="$(REGISTRY)/kamaji" \
		yq -i '.kamaji.image.repository = strenv(REPOSITORY)' values.yaml
	TAG=$(IMAGE_TAG)@$$(yq e '."containerimage.digest"' images/kamaji.json -o json -r) \
		yq -i '.kamaji.image.tag = strenv(TAG)' values.yaml
	yq -i '.kamaji.extraArgs[0] = "--migrate-image=" + .kamaji.image.repository + ":" + .kamaji.image.tag' values.yaml
EOF
cat >"$ROOT/packages/system/kamaji/values.yaml" <<'EOF'
kamaji:
  image:
    repository: ghcr.io/cozystack/cozystack/kamaji
    tag: v0.0.1@sha256:2222222222222222222222222222222222222222222222222222222222222222
  extraArgs:
    - --migrate-image=ghcr.io/cozystack/cozystack/kamaji:v0.0.1@sha256:2222222222222222222222222222222222222222222222222222222222222222
EOF

# cloud-provider: the pin comes from a Makefile variable computed by the
# shell, which patchkit cannot read.
upstream kubevirt/cloud-provider-kubevirt
release kubevirt/cloud-provider-kubevirt v0.5.1
U=packages/apps/kubernetes/images/cloud-provider
mkpatch kubevirt/cloud-provider-kubevirt 'Retries = 3' 'Retries = 9' "$ROOT/$U/patches/retries.diff"
cat >"$ROOT/$U/Dockerfile" <<'EOF'
FROM golang:1.26 AS builder
ARG VERSION
RUN git clone --branch ${VERSION} https://github.com/kubevirt/cloud-provider-kubevirt /src
WORKDIR /src
ADD patches /patches
RUN git apply /patches/*.diff
EOF
printf 'v0.5.1\n' >"$ROOT/packages/apps/kubernetes/VERSION"
cat >"$ROOT/packages/apps/kubernetes/Makefile" <<'EOF'
CP_VERSION = $(shell cat VERSION)
image:
	docker buildx build images/cloud-provider --build-arg VERSION=$(CP_VERSION)
EOF

# an image without patches is not a unit
mkdir -p "$ROOT/packages/system/plain/images/plain"
printf 'FROM alpine:3.22\nRUN git clone https://github.com/example/plain /src\n' >"$ROOT/packages/system/plain/images/plain/Dockerfile"

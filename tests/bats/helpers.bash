# Shared setup for patchkit's bats suite. Every test works inside its own
# $BATS_TEST_TMPDIR (bats removes it), so no test leaves files elsewhere.

REPO_ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
PATCHKIT=${PATCHKIT:-$REPO_ROOT/bin/patchkit}
export PATCHKIT

load "$BATS_TEST_DIRNAME/node_modules/bats-support/load.bash"
load "$BATS_TEST_DIRNAME/node_modules/bats-assert/load.bash"

# No user or system git configuration leaks into the tests.
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=bats GIT_AUTHOR_EMAIL=bats@example.com
export GIT_COMMITTER_NAME=bats GIT_COMMITTER_EMAIL=bats@example.com

# greeter_repo copies the greeter example into $BATS_TEST_TMPDIR/repo and
# generates its upstream in $BATS_TEST_TMPDIR/upstream.
greeter_repo() {
  ROOT=$BATS_TEST_TMPDIR/repo
  UPSTREAM=$BATS_TEST_TMPDIR/upstream
  CACHE=$BATS_TEST_TMPDIR/cache
  cp -R "$REPO_ROOT/examples/greeter" "$ROOT"
  rm -rf "$ROOT/upstream"
  "$REPO_ROOT/examples/mkupstream.sh" "$REPO_ROOT/examples/greeter/upstream" "$UPSTREAM"
}

# pk runs patchkit on the greeter repo with its own cache and upstream.
pk() {
  "$PATCHKIT" --root "$ROOT" --cache-dir "$CACHE" --upstream-url "file://$UPSTREAM" "$@"
}

# json_get FILTER reads JSON on stdin and prints a JavaScript expression of
# it (`j` is the parsed value); it fails on output that is not valid JSON.
json_get() {
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const j=JSON.parse(s);console.log(eval(process.argv[1]))})' "$1"
}

# cozy_monorepo DIR writes a monorepo in cozystack's shape into DIR: package
# directories built by `make -C packages/<group>/<pkg> image` lines of the
# root Makefile's build: target, build macros in hack/*.mk and a library
# chart declared as shared inputs in .patchkit.yaml, a unit whose pin is a
# package Makefile variable (kamaji), a unit that stamps another package's
# values and reads it (objectstorage-controller reads seaweedfs), a package
# without units (http-cache), and a patched unit nothing builds (kubeovn).
cozy_monorepo() {
  local d=$1
  mkdir -p "$d/hack" "$d/packages/library/cozy-lib" "$d/packages/apps/http-cache/templates" \
    "$d/packages/system/kamaji/images/kamaji/patches" "$d/packages/system/kamaji/templates" \
    "$d/packages/system/objectstorage-controller/images/objectstorage/patches" \
    "$d/packages/system/seaweedfs/templates" \
    "$d/packages/system/kubeovn/images/kubeovn/patches"
  cat > "$d/Makefile" <<'MK'
include hack/common-envs.mk

build: build-deps
	make -C packages/apps/http-cache image
	make -C packages/system/kamaji image
	$(MAKE) -C packages/system/objectstorage-controller image
	make manifests

manifests:
	mkdir -p _out/assets
MK
  printf 'REGISTRY ?= ghcr.io/example\n' > "$d/hack/common-envs.mk"
  printf 'image-tags = --tag $(REGISTRY)/$(1):$(2)\n' > "$d/hack/package.mk"
  printf '#!/bin/sh\n' > "$d/hack/e2e.sh"
  printf 'module example.com/cozy\n' > "$d/go.mod"
  printf 'name: cozy-lib\n' > "$d/packages/library/cozy-lib/Chart.yaml"
  cat > "$d/.patchkit.yaml" <<'YAML'
# shared inputs: a change rebuilds every unit
shared:
  - packages/library/
  - hack/*.mk
  - go.mod
YAML
  printf 'image:\n\tdocker build .\n' > "$d/packages/apps/http-cache/Makefile"
  printf 'kind: ConfigMap\n' > "$d/packages/apps/http-cache/templates/cm.yaml"
  # kamaji: the pin is a package Makefile variable
  cat > "$d/packages/system/kamaji/Makefile" <<'MK'
KAMAJI_VERSION ?= 26.3.6-edge
include ../../../hack/package.mk

image:
	docker buildx build images/kamaji --build-arg VERSION=$(KAMAJI_VERSION)
MK
  printf 'kamaji:\n  image:\n    tag: old\n' > "$d/packages/system/kamaji/values.yaml"
  printf 'kind: Deployment\n' > "$d/packages/system/kamaji/templates/deploy.yaml"
  printf 'FROM scratch\nARG VERSION\n' > "$d/packages/system/kamaji/images/kamaji/Dockerfile"
  printf 'Subject: fix\n' > "$d/packages/system/kamaji/images/kamaji/patches/1.diff"
  cat > "$d/packages/system/kamaji/images/kamaji/patchkit.yaml" <<'YAML'
upstream:
  url: https://github.com/clastix/kamaji
  ref:
    makefile-var: KAMAJI_VERSION
    makefile: ../../Makefile
patches: ./patches
build:
  dockerfile: ./Dockerfile
  context: unit
stamp:
  - file: ../../values.yaml
    key: .kamaji.image.tag
YAML
  # objectstorage-controller: its sidecar tag is read from seaweedfs' values
  printf 'image:\n\ttrue\n' > "$d/packages/system/objectstorage-controller/Makefile"
  printf 'Subject: fix\n' > "$d/packages/system/objectstorage-controller/images/objectstorage/patches/1.diff"
  cat > "$d/packages/system/objectstorage-controller/images/objectstorage/patchkit.yaml" <<'YAML'
upstream:
  url: https://github.com/kubernetes-sigs/container-object-storage-interface
  ref: v0.2.1
patches: ./patches
inputs:
  - ../../../seaweedfs/values.yaml
YAML
  printf 'seaweedfs:\n  cosi:\n    sidecar:\n      image: x\n' > "$d/packages/system/seaweedfs/values.yaml"
  printf 'kind: StatefulSet\n' > "$d/packages/system/seaweedfs/templates/sts.yaml"
  # kubeovn: patched, but no line of build: builds it
  printf 'image:\n\ttrue\n' > "$d/packages/system/kubeovn/Makefile"
  printf 'Subject: fix\n' > "$d/packages/system/kubeovn/images/kubeovn/patches/0001-mtu.diff"
  cat > "$d/packages/system/kubeovn/images/kubeovn/patchkit.yaml" <<'YAML'
upstream:
  url: https://github.com/kubeovn/kube-ovn
  ref: v1.15.10
patches: ./patches
YAML
}

#!/usr/bin/env bats
# hack/build-matrix.sh and patchkit matrix: which image units a change builds.

setup() {
  load helpers
  # A repository in patchkit's own shape: two units in build:, one image
  # that no line builds, shared inputs declared in .patchkit.yaml.
  MONO=$BATS_TEST_TMPDIR/mono
  mkdir -p "$MONO/hack" "$MONO/images/alpha" "$MONO/images/beta" "$MONO/images/orphan" \
    "$MONO/patches/alpha" "$MONO/patches/beta/tests" "$MONO/shared" "$MONO/cmd" "$MONO/internal" \
    "$MONO/.github/workflows"
  cp "$REPO_ROOT/hack/build-matrix.sh" "$MONO/hack/"
  touch "$MONO/go.mod" "$MONO/go.sum" "$MONO/shared/Dockerfile.alpha"
  cp "$REPO_ROOT/.patchkit.yaml" "$MONO/"
  cat > "$MONO/Makefile" <<'MK'
IMAGE ?=
build:
	$(MAKE) image IMAGE=alpha
	make image IMAGE=beta PUSH=1

image:
	patchkit build $(IMAGE)
MK
  spec() {
    printf 'upstream:\n  url: file:///u\n  ref: v1\npatches: patches/%s\n%s' "$1" "$2" > "$MONO/images/$1/patchkit.yaml"
  }
  spec alpha 'build:
  dockerfile: shared/Dockerfile.alpha
'
  spec beta 'test:
  inject:
    - {from: patches/beta/tests/x_test.go, to: pkg/x_test.go}
  package: ./pkg
'
  spec orphan ''
  m() { PATCHKIT=$PATCHKIT "$MONO/hack/build-matrix.sh" "$@"; }
  changed() { printf '%s\n' "$@" > "$BATS_TEST_TMPDIR/changed.txt"; }
  # cozystack's shape
  COZY=$BATS_TEST_TMPDIR/cozy
  cozy_monorepo "$COZY"
  cp "$REPO_ROOT/hack/build-matrix.sh" "$COZY/hack/"
  cm() { PATCHKIT=$PATCHKIT "$COZY/hack/build-matrix.sh" "$@"; }
}

@test "no argument, empty argument or FULL: every unit, but a unit nothing builds fails" {
  rm -r "$MONO/images/orphan"
  run m
  assert_success
  assert_output '["images/alpha","images/beta"]'
  run m ""
  assert_output '["images/alpha","images/beta"]'
  run m FULL
  assert_output '["images/alpha","images/beta"]'
  mkdir "$MONO/images/orphan"
  spec orphan ''
  run m FULL
  assert_failure 1
  assert_output --partial 'images/orphan: selected by FULL, but no line of Makefile'"'"'s build: target builds it'
  assert_output --partial 'add `$(MAKE) image IMAGE=orphan`'
}

@test "a file under images/<name>/ selects that unit" {
  changed images/beta/values.yaml
  run m "$BATS_TEST_TMPDIR/changed.txt"
  assert_success
  assert_output '["images/beta"]'
}

@test "a file under the unit's patch directory selects it" {
  changed patches/alpha/0001-fix.diff
  run m "$BATS_TEST_TMPDIR/changed.txt"
  assert_output '["images/alpha"]'
}

@test "a file the spec refers to selects the unit" {
  changed shared/Dockerfile.alpha
  run m "$BATS_TEST_TMPDIR/changed.txt"
  assert_output '["images/alpha"]'
  changed patches/beta/tests/x_test.go
  run m "$BATS_TEST_TMPDIR/changed.txt"
  assert_output '["images/beta"]'
}

@test "an unrelated file selects nothing" {
  changed README.md docs/x.md
  run m "$BATS_TEST_TMPDIR/changed.txt"
  assert_success
  assert_output '[]'
}

@test "a shared input of .patchkit.yaml selects every unit" {
  rm -r "$MONO/images/orphan"
  for f in cmd/patchkit/main.go internal/apply/apply.go go.mod go.sum Makefile hack/build-matrix.sh .github/workflows/pr.yaml .patchkit.yaml; do
    changed README.md "$f"
    run m "$BATS_TEST_TMPDIR/changed.txt"
    assert_output '["images/alpha","images/beta"]'
  done
}

@test "without .patchkit.yaml, patchkit's own layout is nothing special" {
  rm -r "$MONO/images/orphan" "$MONO/.patchkit.yaml"
  changed internal/apply/apply.go .github/workflows/pr.yaml go.mod
  run m "$BATS_TEST_TMPDIR/changed.txt"
  assert_success
  assert_output '[]'
  changed Makefile
  run m "$BATS_TEST_TMPDIR/changed.txt"
  assert_output '["images/alpha","images/beta"]'
}

@test "changed files on stdin" {
  run bash -c "printf 'patches/beta/0001.diff\n' | PATCHKIT=$PATCHKIT $MONO/hack/build-matrix.sh -"
  assert_success
  assert_output '["images/beta"]'
}

@test "reverting an image's build line out of the Makefile: exit 1 naming the unit, never a silent []" {
  changed images/beta/values.yaml
  run m "$BATS_TEST_TMPDIR/changed.txt"
  assert_output '["images/beta"]'
  sed -i '/IMAGE=beta/d' "$MONO/Makefile"
  run m "$BATS_TEST_TMPDIR/changed.txt"
  assert_failure 1
  assert_output '[]
patchkit: images/beta: selected by images/beta/values.yaml, but no line of Makefile'"'"'s build: target builds it, so CI would never build it: add `$(MAKE) image IMAGE=beta`'
}

@test "a missing changed-files list: exit 2" {
  run m "$BATS_TEST_TMPDIR/nope.txt"
  assert_failure 2
  assert_output --partial "nope.txt"
}

@test "monorepo: make -C lines build the units under their directory" {
  changed packages/system/kamaji/images/kamaji/patches/1.diff
  run cm "$BATS_TEST_TMPDIR/changed.txt"
  assert_success
  assert_output '["packages/system/kamaji/images/kamaji"]'
  run cm "$BATS_TEST_TMPDIR/changed.txt" --by build-dir
  assert_output '["packages/system/kamaji"]'
}

@test "monorepo: a package Makefile change (the pin) selects its unit" {
  sed -i 's/26.3.6-edge/26.3.7-edge/' "$COZY/packages/system/kamaji/Makefile"
  changed packages/system/kamaji/Makefile
  run cm "$BATS_TEST_TMPDIR/changed.txt"
  assert_success
  assert_output '["packages/system/kamaji/images/kamaji"]'
}

@test "monorepo: a cross-package input selects the unit that reads it" {
  changed packages/system/seaweedfs/values.yaml
  run cm "$BATS_TEST_TMPDIR/changed.txt"
  assert_success
  assert_output '["packages/system/objectstorage-controller/images/objectstorage"]'
  changed packages/system/seaweedfs/templates/sts.yaml
  run cm "$BATS_TEST_TMPDIR/changed.txt"
  assert_output '[]'
}

@test "monorepo: shared inputs from .patchkit.yaml rebuild every unit, and the unbuilt one fails" {
  for f in packages/library/cozy-lib/Chart.yaml hack/common-envs.mk hack/package.mk go.mod Makefile .patchkit.yaml; do
    changed "$f"
    run cm "$BATS_TEST_TMPDIR/changed.txt"
    assert_failure 1
    assert_output --partial "packages/system/kubeovn/images/kubeovn: selected by $f"
  done
  changed hack/e2e.sh
  run cm "$BATS_TEST_TMPDIR/changed.txt"
  assert_success
  assert_output '[]'
  printf '\tmake -C packages/system/kubeovn image\n' > "$BATS_TEST_TMPDIR/line"
  sed -i "/objectstorage-controller image/r $BATS_TEST_TMPDIR/line" "$COZY/Makefile"
  changed hack/package.mk
  run cm "$BATS_TEST_TMPDIR/changed.txt"
  assert_success
  assert_output '["packages/system/kamaji/images/kamaji","packages/system/kubeovn/images/kubeovn","packages/system/objectstorage-controller/images/objectstorage"]'
  run cm "$BATS_TEST_TMPDIR/changed.txt" --by build-dir
  assert_output '["packages/apps/http-cache","packages/system/kamaji","packages/system/kubeovn","packages/system/objectstorage-controller"]'
}

@test "monorepo: a patched unit nothing builds is exit 1 naming it and the line to add" {
  changed packages/system/kubeovn/images/kubeovn/patches/0001-mtu.diff
  run cm "$BATS_TEST_TMPDIR/changed.txt"
  assert_failure 1
  assert_output '[]
patchkit: packages/system/kubeovn/images/kubeovn: selected by packages/system/kubeovn/images/kubeovn/patches/0001-mtu.diff, but no line of Makefile'"'"'s build: target builds it, so CI would never build it: add `make -C packages/system/kubeovn image`'
}

@test "monorepo: FULL prints the units that build, names the unbuilt one on stderr (an annotation with -o github), exit 1" {
  bats_require_minimum_version 1.5.0
  run --separate-stderr "$PATCHKIT" --root "$COZY" matrix FULL
  assert_failure 1
  assert_output '["packages/system/kamaji/images/kamaji","packages/system/objectstorage-controller/images/objectstorage"]'
  [[ $stderr == "patchkit: packages/system/kubeovn/images/kubeovn: selected by FULL, but no line of Makefile's build: target builds it"* ]]
  run --separate-stderr "$PATCHKIT" --root "$COZY" -o github matrix FULL
  assert_failure 1
  assert_line --index 0 '["packages/system/kamaji/images/kamaji","packages/system/objectstorage-controller/images/objectstorage"]'
  [[ ${lines[1]} == "::error file=Makefile,line=1,title=patchkit matrix%3A unbuilt unit::packages/system/kubeovn/images/kubeovn has a spec, but nothing builds it: add \`make -C packages/system/kubeovn image\`"* ]]
}

@test "monorepo: .patchkit.yaml acknowledges an unbuilt unit with a reason: reported, not failed, in matrix and verify's unit check" {
  bats_require_minimum_version 1.5.0
  printf 'unbuilt:\n  - unit: packages/system/kubeovn/images/kubeovn\n    reason: built by the kube-ovn release job\n' >> "$COZY/.patchkit.yaml"
  run --separate-stderr "$PATCHKIT" --root "$COZY" matrix FULL
  assert_success
  assert_output '["packages/system/kamaji/images/kamaji","packages/system/objectstorage-controller/images/objectstorage"]'
  [[ $stderr == *"patchkit: note: packages/system/kubeovn/images/kubeovn is not built (.patchkit.yaml:"*": built by the kube-ovn release job)"* ]]
  printf 'unbuilt:\n  - unit: packages/system/kubeovn/images/kubeovn\n' > "$COZY/.patchkit.yaml"
  run "$PATCHKIT" --root "$COZY" matrix FULL
  assert_failure 2
  assert_output --partial ".patchkit.yaml:2: unbuilt[0].reason: required"
}

@test "monorepo: --by build-dir selects a package without units by its files" {
  changed packages/apps/http-cache/templates/cm.yaml packages/system/kamaji/templates/deploy.yaml
  run cm "$BATS_TEST_TMPDIR/changed.txt"
  assert_success
  assert_output '[]'
  run cm "$BATS_TEST_TMPDIR/changed.txt" --by build-dir
  assert_success
  assert_output '["packages/apps/http-cache","packages/system/kamaji"]'
}

@test "a deprecated spec spelling is read, with one warning naming file and line; one that contradicts its replacement is exit 2" {
  bats_require_minimum_version 1.5.0
  rm -r "$MONO/images/orphan"
  spec alpha 'build:
  dockerfile: shared/Dockerfile.alpha
  target: builder
'
  run --separate-stderr "$PATCHKIT" --root "$MONO" matrix FULL
  assert_success
  assert_output '["images/alpha","images/beta"]'
  [ "$stderr" = "patchkit: warning: images/alpha/patchkit.yaml:7: build.target is the Dockerfile stage to build (--target): write stage (deprecated)" ]
  spec alpha 'build:
  dockerfile: shared/Dockerfile.alpha
  stage: builder
  target: tester
'
  run --separate-stderr "$PATCHKIT" --root "$MONO" matrix FULL
  assert_failure 2
  [[ $stderr == *"images/alpha/patchkit.yaml:8: build.target: conflicts with build.stage on line 7: write only stage"* ]]
}

@test "every -o is honoured: text, json and github print the array, markdown lists the units; another is exit 2 before anything is read" {
  bats_require_minimum_version 1.5.0
  rm -r "$MONO/images/orphan"
  for o in text json github; do
    run --separate-stderr "$PATCHKIT" --root "$MONO" -o "$o" matrix FULL
    assert_success
    assert_output '["images/alpha","images/beta"]'
  done
  run --separate-stderr "$PATCHKIT" --root "$MONO" -o markdown matrix FULL
  assert_success
  assert_output '### patchkit matrix: 2 to build

- `images/alpha`
- `images/beta`'
  run --separate-stderr "$PATCHKIT" --root "$BATS_TEST_TMPDIR/nowhere" -o html matrix FULL
  assert_failure 2
  assert_output ''
  [[ $stderr == *"-o"*"html"* ]]
  [[ $stderr != *nowhere* ]]
}

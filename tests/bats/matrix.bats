#!/usr/bin/env bats
# hack/build-matrix.sh: which image units a change builds.

setup() {
  load helpers
  # A monorepo with two units in build: and one image that is not a unit.
  MONO=$BATS_TEST_TMPDIR/mono
  mkdir -p "$MONO/hack" "$MONO/images/alpha" "$MONO/images/beta" "$MONO/images/orphan" \
    "$MONO/patches/alpha" "$MONO/patches/beta/tests" "$MONO/shared"
  cp "$REPO_ROOT/hack/build-matrix.sh" "$MONO/hack/"
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
}

@test "no argument, empty argument or FULL: every unit" {
  run m
  assert_success
  assert_output '["images/alpha","images/beta"]'
  run m ""
  assert_output '["images/alpha","images/beta"]'
  run m FULL
  assert_output '["images/alpha","images/beta"]'
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
  changed README.md docs/x.md images/orphan/patchkit.yaml
  run m "$BATS_TEST_TMPDIR/changed.txt"
  assert_success
  assert_output '[]'
}

@test "a shared build input selects every unit" {
  for f in cmd/patchkit/main.go internal/apply/apply.go go.mod go.sum Makefile hack/build-matrix.sh .github/workflows/pr.yaml; do
    changed README.md "$f"
    run m "$BATS_TEST_TMPDIR/changed.txt"
    assert_output '["images/alpha","images/beta"]'
  done
}

@test "changed files on stdin" {
  run bash -c "printf 'patches/beta/0001.diff\n' | PATCHKIT=$PATCHKIT $MONO/hack/build-matrix.sh -"
  assert_success
  assert_output '["images/beta"]'
}

@test "reverting an image's build line out of the Makefile drops the unit" {
  changed images/beta/values.yaml
  run m "$BATS_TEST_TMPDIR/changed.txt"
  assert_output '["images/beta"]'
  sed -i '/IMAGE=beta/d' "$MONO/Makefile"
  run m "$BATS_TEST_TMPDIR/changed.txt"
  assert_output '[]'
  run m FULL
  assert_output '["images/alpha"]'
}

@test "a missing changed-files list: exit 2" {
  run m "$BATS_TEST_TMPDIR/nope.txt"
  assert_failure 2
  assert_output --partial "nope.txt"
}

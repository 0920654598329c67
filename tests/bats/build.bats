#!/usr/bin/env bats
# patchkit gate, build (native, into an OCI layout) and stamp, end to end on
# the greeter example.

setup() {
  load helpers
  greeter_repo
}

@test "gate: passes on the series; the ownership matrix matches Test: headers" {
  run pk gate greeter
  assert_success
  assert_output --partial "gate passed"
  assert_line --regexp 'without 0001-greet-world.diff +green +red +green +ok: owns TestGreeterPatches/empty_name'
  assert_line --regexp 'without 0002-shout-trims.diff +green +green +red +ok: owns TestGreeterPatches/shout_trims'
}

@test "gate: a Test: header that does not match the red subtests is a finding" {
  sed -i 's|^Test: TestGreeterPatches/empty_name|Test: TestGreeterPatches/plain_name|' "$ROOT/patches/greeter/0001-greet-world.diff"
  run pk gate greeter
  assert_failure 1
}

@test "build: native into an OCI layout, stamped; the digest is reproducible" {
  run pk -o json build greeter --oci-layout "$BATS_TEST_TMPDIR/oci" --stamp
  assert_success
  digest=$(json_get 'j.digest' <<<"$output")
  [[ "$digest" =~ ^sha256:[0-9a-f]{64}$ ]]
  run json_get 'j.tests.run + " " + j.tests.passed + " " + j.tests.failed' <<<"$output"
  assert_output "4 4 0"
  run grep -c "tag: v1.0.0@$digest  # stamped" "$ROOT/images/greeter/values.yaml"
  assert_output "1"
  # the layout holds the image, by digest
  run grep -c "${digest#sha256:}" "$BATS_TEST_TMPDIR/oci/index.json"
  assert_output "1"
  # same inputs, same digest
  run pk -o json build greeter --oci-layout "$BATS_TEST_TMPDIR/oci2"
  assert_success
  [ "$(json_get 'j.digest' <<<"$output")" = "$digest" ]
}

@test "stamp: writes tag@digest keeping the file's comments" {
  d=sha256:$(printf '%064d' 7)
  run pk stamp greeter --digest "$d"
  assert_success
  run cat "$ROOT/images/greeter/values.yaml"
  assert_line --index 0 "# Helm values for greeter. \`patchkit stamp greeter\` keeps image.tag pinned to"
  assert_line "  tag: v1.0.0@$d  # stamped"
}

@test "stamp: a digest that is not sha256:<64 hex> is refused, file untouched" {
  cp "$ROOT/images/greeter/values.yaml" "$BATS_TEST_TMPDIR/before.yaml"
  run pk stamp greeter --digest sha256:abc
  assert_failure 2
  run cmp "$BATS_TEST_TMPDIR/before.yaml" "$ROOT/images/greeter/values.yaml"
  assert_success
}

@test "build: a failing gate builds and stamps nothing, exit 1" {
  cp "$ROOT/images/greeter/values.yaml" "$BATS_TEST_TMPDIR/before.yaml"
  sed -i 's/"Hello, world!"/"Hello, everyone!"/' "$ROOT/patches/greeter/tests/patches_test.go"
  run pk build greeter --oci-layout "$BATS_TEST_TMPDIR/oci" --stamp
  assert_failure 1
  [ ! -e "$BATS_TEST_TMPDIR/oci" ]
  run cmp "$BATS_TEST_TMPDIR/before.yaml" "$ROOT/images/greeter/values.yaml"
  assert_success
}

# make_image runs the Makefile's image target on the greeter repo with the
# built patchkit (-o bin: bin/patchkit is not rebuilt).
make_image() {
  make -s -C "$REPO_ROOT" -o bin image IMAGE=greeter BIN="$PATCHKIT" \
    PATCHKIT_FLAGS="--root $ROOT --cache-dir $CACHE --upstream-url file://$UPSTREAM" "$@"
}

@test "make image: PUSH= and PUSH=0 build without pushing; PUSH=1 and true push" {
  for push in "" 0 no; do
    rm -rf "$ROOT/_output"
    run make_image PUSH="$push" REGISTRY=
    assert_success
    [ -f "$ROOT/_output/greeter/oci/index.json" ]
  done
  # with a push and no registry, patchkit refuses: the flag got through
  for push in 1 true yes; do
    run make_image PUSH="$push" REGISTRY=
    assert_failure 2
    assert_output --partial "--push needs a registry"
  done
}

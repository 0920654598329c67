#!/usr/bin/env bats
# A pin in a plain file, on aws/eks-distro's shape: projects/o/r/1-30 holds
# GIT_TAG and GOLANG_VERSION beside patches/ and the spec, which reads its
# pin from GIT_TAG. upgrade moves GIT_TAG with the series; a bad GIT_TAG is
# bad input naming its line, through the binary's error path.

setup() {
  load helpers
  ROOT=$BATS_TEST_TMPDIR/repo
  UPSTREAM=$BATS_TEST_TMPDIR/upstream
  CACHE=$BATS_TEST_TMPDIR/cache
  UNIT=$ROOT/projects/o/r/1-30
  git init -q "$UPSTREAM"
  printf 'module example.com/r\n\ngo 1.24.0\n' > "$UPSTREAM/go.mod"
  printf 'package main\n\nfunc main() {\n\tprintln("hello")\n}\n' > "$UPSTREAM/main.go"
  git -C "$UPSTREAM" add -A && git -C "$UPSTREAM" commit -qm v1.0.0 && git -C "$UPSTREAM" tag v1.0.0
  git -C "$UPSTREAM" checkout -q -b fix
  sed -i 's/"hello"/"hello, fixed"/' "$UPSTREAM/main.go"
  git -C "$UPSTREAM" commit -qam "Fix the greeting"
  mkdir -p "$UNIT/patches"
  git -C "$UPSTREAM" format-patch -q -1 -o "$UNIT/patches" && mv "$UNIT"/patches/0001-*.patch "$UNIT/patches/0001-x.patch"
  git -C "$UPSTREAM" checkout -q -
  printf 'module example.com/r\n\ngo 1.25.0\n' > "$UPSTREAM/go.mod"
  printf '// Package main greets.\npackage main\n\nfunc main() {\n\tprintln("hello")\n}\n' > "$UPSTREAM/main.go"
  git -C "$UPSTREAM" commit -qam v1.1.0 && git -C "$UPSTREAM" tag v1.1.0
  printf 'v1.0.0\n' > "$UNIT/GIT_TAG"
  printf '1.24\n' > "$UNIT/GOLANG_VERSION"
  cat > "$UNIT/patchkit.yaml" <<'YAML'
upstream:
  url: https://github.com/o/r.git
  ref:
    file: ./GIT_TAG
  releases: "v1.*"
  versions:
    - file: ./GOLANG_VERSION
      whole-file: true
patches: ./patches
YAML
  git init -q "$ROOT" && git -C "$ROOT" add -A && git -C "$ROOT" commit -qm eks
}

pk() {
  "$PATCHKIT" --root "$ROOT" --cache-dir "$CACHE" --upstream-url "file://$UPSTREAM" "$@"
}

@test "upgrade --to moves GIT_TAG and GOLANG_VERSION with the series, and git am applies it at GIT_TAG" {
  run pk upgrade projects/o/r/1-30 --to v1.1.0 --dry-run
  assert_success
  assert_line --partial "would upgrade (dry run, nothing written) v1.0.0"
  assert_line --partial "in projects/o/r/1-30/GIT_TAG"
  run git -C "$ROOT" status --porcelain
  assert_output ""

  run pk upgrade projects/o/r/1-30 --to v1.1.0
  assert_success
  run cat "$UNIT/GIT_TAG" "$UNIT/GOLANG_VERSION"
  assert_output $'v1.1.0\n1.25'
  run git -C "$ROOT" status --porcelain
  assert_output $' M projects/o/r/1-30/GIT_TAG\n M projects/o/r/1-30/GOLANG_VERSION\n M projects/o/r/1-30/patches/0001-x.patch'

  git clone -q "$UPSTREAM" "$BATS_TEST_TMPDIR/work"
  git -C "$BATS_TEST_TMPDIR/work" checkout -q "$(cat "$UNIT/GIT_TAG")"
  run git -C "$BATS_TEST_TMPDIR/work" am -q "$UNIT/patches/0001-x.patch"
  assert_success

  run pk verify projects/o/r/1-30
  assert_success
  assert_line --regexp '^    pass pin +v1\.1\.0 is read from projects/o/r/1-30/GIT_TAG:1'
  assert_line --regexp '^    pass versions +projects/o/r/1-30/GOLANG_VERSION:1 holds Go 1\.25'
}

@test "a GIT_TAG of two lines is bad input naming its line, in text and in JSON" {
  printf 'v1.0.0\nv1.1.0\n' > "$UNIT/GIT_TAG"
  run pk verify projects/o/r/1-30
  assert_failure 2
  assert_output --partial 'projects/o/r/1-30/GIT_TAG:2: upstream.ref: a second line ("v1.1.0" after "v1.0.0" on line 1)'
  run pk -o json upgrade projects/o/r/1-30 --to v1.1.0
  assert_failure 2
  run json_get '[j.kind, j.file, j.line, j.key].join(" ")' <<<"$(pk -o json upgrade projects/o/r/1-30 --to v1.1.0 2>/dev/null)"
  assert_output "input projects/o/r/1-30/GIT_TAG 2 upstream.ref"
  run git -C "$ROOT" status --porcelain
  assert_output " M projects/o/r/1-30/GIT_TAG"
}

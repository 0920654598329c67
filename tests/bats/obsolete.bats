#!/usr/bin/env bats
# patchkit obsolete-check, end to end on the greeter example: upstream
# released patch 0001 in v1.1.0.

setup() {
  load helpers
  greeter_repo
}

@test "obsolete-check: 0001 present from v1.1.0, 0002 still needed; exit 1" {
  run pk obsolete-check greeter
  assert_failure 1
  assert_output --partial "v1.1.0 (87c8eb0d69c4)"
  assert_line --regexp '0001-greet-world.diff +applies +present +present +v1.1.0'
  assert_line --regexp '0002-shout-trims.diff +applies +applies +applies +-'
}

@test "obsolete-check -o json: obsoletedBy and statuses per ref" {
  run pk obsolete-check greeter -o json
  assert_failure 1
  run json_get 'j.patches.map(p => p.file.split("/").pop() + ":" + p.obsoletedBy + ":" + p.results.map(r => r.ref + "=" + r.status).join(",")).join(" ")' <<<"$output"
  assert_output "0001-greet-world.diff:v1.1.0:v1.0.1=applies,v1.1.0=present,main=present 0002-shout-trims.diff:null:v1.0.1=applies,v1.1.0=applies,main=applies"
}

@test "obsolete-check --refs v1.0.1: nothing obsolete, exit 0" {
  run pk obsolete-check greeter --refs v1.0.1
  assert_success
}

@test "obsolete-check --write records Applied-Upstream from the evidence" {
  sed -i '/^Applied-Upstream:/d' "$ROOT/patches/greeter/0001-greet-world.diff"
  run pk obsolete-check greeter --write
  assert_failure 1
  run grep -c '^Applied-Upstream: v1.1.0$' "$ROOT/patches/greeter/0001-greet-world.diff"
  assert_output "1"
  # the file is otherwise what it was: verify still passes
  run pk verify greeter
  assert_success
}

@test "obsolete-check -o markdown: a table for an issue comment" {
  run pk obsolete-check greeter -o markdown
  assert_failure 1
  assert_output --partial "| patch | \`v1.0.1\` | \`v1.1.0\` | \`main\` |"
}

@test "obsolete-check --offline with an empty cache: exit 2, not 1" {
  run pk --offline obsolete-check greeter
  assert_failure 2
}

@test "obsolete-check --write on a reference file writes only its header" {
  id=$(git -C "$UPSTREAM" rev-parse v1.1.0~1)
  rm "$ROOT/patches/greeter/0001-greet-world.diff"
  run pk backport greeter "$id" --reference --name greet-world
  assert_success
  ref="$ROOT/patches/greeter/0003-greet-world.ref.diff"
  [ -f "$ref" ]
  run grep -c '^diff --git' "$ref"
  assert_output "0"
  run pk obsolete-check greeter --write
  assert_failure 1
  run grep -c '^Applied-Upstream: v1.1.0$' "$ref"
  assert_output "1"
  run grep -c '^diff --git' "$ref"
  assert_output "0"
  run pk verify greeter
  assert_success
}

@test "obsolete-check on a mirror holding only tags (no HEAD): the verdicts of the upstream, run after run" {
  mirror=$BATS_TEST_TMPDIR/mirror.git
  git init -q --bare --initial-branch=master "$mirror"
  git --git-dir="$mirror" fetch -q --no-tags "$UPSTREAM" '+refs/tags/*:refs/tags/*'
  run git ls-remote "file://$mirror"
  refute_output --partial "HEAD"
  run pk obsolete-check greeter --refs v1.0.1,v1.1.0 -o json
  assert_failure 1
  want=$output
  for i in 1 2; do
    run "$PATCHKIT" --root "$ROOT" --cache-dir "$BATS_TEST_TMPDIR/mirror-cache" --upstream-url "file://$mirror" obsolete-check greeter --refs v1.0.1,v1.1.0 -o json
    assert_failure 1
    assert_output "${want//$UPSTREAM/$mirror}"
  done
  run "$PATCHKIT" --root "$ROOT" --cache-dir "$BATS_TEST_TMPDIR/mirror-cache" --upstream-url "file://$mirror" --offline obsolete-check greeter --refs v1.0.1,v1.1.0
  assert_failure 1
}

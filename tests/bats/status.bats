#!/usr/bin/env bats
# patchkit status and forward, end to end on the greeter example: upstream
# released patch 0001 in v1.1.0; 0002 is an original nobody forwarded.

setup() {
  load helpers
  greeter_repo
  git -C "$ROOT" init -q
  git -C "$ROOT" add -A
  git -C "$ROOT" -c user.name=t -c user.email=t@example.com commit -qm "the greeter series"
}

@test "status: 0001 droppable, 0002 an original with no upstream PR; exit 0" {
  run pk status greeter
  assert_success
  assert_line --regexp '^greeter \(images/greeter\): pin v1.0.0, newest v1.1.0, 2 releases behind, 2 patches; v1.0.0 behind v1.0.1, the newest v1.0 release$'
  assert_line --partial '0001-greet-world.diff: droppable'
  assert_line --partial '0002-shout-trims.diff: original change with no upstream PR or issue'
}

@test "status -o json: the documented shape" {
  run pk status greeter -o json
  assert_success
  run json_get 'j.units.map(u => u.dir + " " + u.pin + " " + u.newest + " " + u.behind + " " + u.patches.map(p => p.file.split("/").pop() + ":" + p.verdict + ":" + p.obsoletedBy + ":" + p.upstream.kind + ":" + p.findings.join("+") + ":" + (p.added !== null)).join(" ")).join()' <<<"$output"
  assert_output "images/greeter v1.0.0 v1.1.0 2 0001-greet-world.diff:present:v1.1.0:commit:droppable:true 0002-shout-trims.diff:applies:null:none:no-upstream:true"
}

@test "forward, then --pr: status follows the PR" {
  run pk forward patches/greeter/0002-shout-trims.diff --author "Dev <dev@example.com>" --out "$BATS_TEST_TMPDIR/fwd"
  assert_success
  run bash -c "ls '$BATS_TEST_TMPDIR/fwd'"
  assert_line --regexp '^0001-greet-Shout-trims-the-name\.patch$'
  assert_line --regexp '^0001-greet-Shout-trims-the-name\.pr\.md$'
  run pk forward patches/greeter/0002-shout-trims.diff --pr https://github.com/example/greeter/pull/7
  assert_success
  run grep -c '^Forwarded: https://github.com/example/greeter/pull/7$' "$ROOT/patches/greeter/0002-shout-trims.diff"
  assert_output "1"
  run pk --offline status greeter -o json
  assert_success
  run json_get 'j.units[0].patches[1].upstream.kind + " " + j.units[0].patches[1].upstream.state + " " + j.units[0].patches[1].findings.length' <<<"$output"
  assert_output "pr unknown 0"
}

@test "status -o html: one page with an SVG" {
  run pk status greeter -o html
  assert_success
  assert_output --partial '<svg xmlns="http://www.w3.org/2000/svg" id="history"'
  refute_output --partial '<script'
}

#!/usr/bin/env bats
# patchkit verify and patchkit backport, end to end on the greeter example.

setup() {
  load helpers
  greeter_repo
}

@test "verify: the example series passes every check, exit 0" {
  run pk verify greeter
  assert_success
  assert_output --partial "greeter: ok"
  assert_output --partial "pass backport         identical to upstream"
  assert_output --partial "pass applied-upstream v1.1.0 carries the change"
  assert_output --partial "pass unit"
}

@test "verify -o json: the DESIGN shape, one object for one image" {
  run pk verify greeter -o json
  assert_success
  run json_get 'j.image + " " + j.ok + " " + j.checks.every(c => ["patch","check","status","message"].every(k => k in c))' <<<"$output"
  assert_output "greeter true true"
}

@test "verify without IMAGE: a JSON array of every image" {
  sed -i "s|^  url: .*|  url: file://$UPSTREAM|" "$ROOT/images/greeter/patchkit.yaml"
  run "$PATCHKIT" --root "$ROOT" --cache-dir "$CACHE" verify -o json
  assert_success
  run json_get 'Array.isArray(j) + " " + j.length' <<<"$output"
  assert_output "true 1"
}

@test "verify: a wrong removal note fails, exit 1, and names the release" {
  sed -i 's/^Applied-Upstream: v1.1.0/Applied-Upstream: v1.0.1/' "$ROOT/patches/greeter/0001-greet-world.diff"
  run pk verify greeter
  assert_failure 1
  assert_output --partial "FAIL applied-upstream"
  assert_output --partial "v1.1.0"
}

@test "verify: a hand-edited backport differs, exit 1" {
  sed -i 's/^+\t\tname = "world"/+\t\tname = "everyone"/' "$ROOT/patches/greeter/0001-greet-world.diff"
  run pk verify greeter
  assert_failure 1
  assert_output --partial "differs"
}

@test "verify: an image the Makefile never builds is a finding" {
  sed -i '/IMAGE=greeter/d' "$ROOT/Makefile"
  run pk verify greeter
  assert_failure 1
  assert_output --partial "no line of Makefile's build: target builds it"
}

@test "verify -o github: annotations on the patch line" {
  printf 'Subject: x\nOrigin: vendor\nForwarded: no\n\ndiff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1,3 +1,3 @@\n # greeter\n \n-A tiny upstream project that patchkit'"'"'s demo carries patches against.\n+A tiny upstream project. \n' > "$ROOT/patches/greeter/0003-ws.diff"
  run pk verify greeter -o github
  assert_failure 1
  assert_output --partial "::error file=patches/greeter/0003-ws.diff,line=12"
}

@test "backport writes the next patch of the series, and it passes verify" {
  id=$(git -C "$UPSTREAM" rev-parse v1.0.1)
  run pk backport greeter "$id" --name usage
  assert_success
  [ -f "$ROOT/patches/greeter/0003-usage.diff" ]
  run head -2 "$ROOT/patches/greeter/0003-usage.diff"
  assert_line --index 0 "Subject: docs: describe usage"
  run pk verify greeter
  assert_success
}

@test "backport of a commit that conflicts with the series: written, exit 1" {
  id=$(git -C "$UPSTREAM" rev-parse v1.1.0)
  run pk backport greeter "$id" --name whisper
  assert_failure 1
  assert_output --partial "does not apply to v1.0.0"
  [ -f "$ROOT/patches/greeter/0003-whisper.diff" ]
}

@test "backport of a commit upstream does not have: exit 2" {
  run pk backport greeter 0123456789abcdef0123456789abcdef01234567
  assert_failure 2
}

@test "verify over every unit: an unreachable chart host fails its unit alone; one line per unit on stderr, stdout the report" {
  bats_require_minimum_version 1.5.0
  sed -i "s|^  url: .*|  url: file://$UPSTREAM|" "$ROOT/images/greeter/patchkit.yaml"
  mkdir -p "$ROOT/packages/app/charts/down"
  printf 'apiVersion: v2\nname: down\nversion: 1.0.0\n' >"$ROOT/packages/app/charts/down/Chart.yaml"
  # Port 9 (discard) on loopback: nothing listens, the connection is refused.
  cat >"$ROOT/packages/app/patchkit-charts.yaml" <<'YAML'
charts:
  - dir: ./charts/down
    upstream: {helm: "http://127.0.0.1:9/charts", chart: down}
    version: {value: 1.0.0}
YAML
  run --separate-stderr "$PATCHKIT" --root "$ROOT" --cache-dir "$CACHE" verify -o json
  [ "$status" -eq 2 ]
  local err=$stderr
  [[ $err == *"patchkit: greeter: ok ("*")"* ]]
  [[ $err == *"patchkit: packages/app/charts/down: fetching http://127.0.0.1:9/charts/index.yaml: "* ]]
  [ "$(grep -c '^patchkit: ' <<<"$err")" -eq 2 ] # a line per unit
  run json_get 'j.map(r => r.image + " " + r.ok + " " + (r.exitCode || 0)).join(",")' <<<"$output"
  assert_output "greeter true 0,packages/app/charts/down false 2"
}

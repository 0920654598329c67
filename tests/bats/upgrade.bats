#!/usr/bin/env bats
# patchkit upgrade and refresh, end to end on the greeter example: upstream
# released patch 0001 in v1.1.0, and 0002 moved by three lines there.

setup() {
  load helpers
  greeter_repo
}

@test "upgrade --dry-run prints the plan and writes nothing" {
  cp -R "$ROOT" "$BATS_TEST_TMPDIR/before"
  run pk upgrade greeter --dry-run
  assert_success
  assert_line --partial "would upgrade (dry run, nothing written) v1.0.0"
  assert_line --regexp '^  dropped +0001-greet-world.diff: .*87c8eb0d69c4'
  assert_line --regexp '^  refreshed +0002-shout-trims.diff'
  run diff -r "$BATS_TEST_TMPDIR/before" "$ROOT"
  assert_success
}

@test "upgrade moves the pin, drops 0001, refreshes 0002, and the gate passes" {
  run pk upgrade greeter -o markdown
  assert_success
  assert_output --partial "## patchkit upgrade: greeter v1.0.0 → v1.1.0"
  assert_output --partial '| `0001-greet-world.diff` | dropped | present |'
  assert_output --partial "**passed**"
  assert_output --partial '`TestGreeterPatches/empty_name` (owned by dropped `0001-greet-world.diff`): pass'
  run grep -c '^  ref: v1.1.0$' "$ROOT/images/greeter/patchkit.yaml"
  assert_output "1"
  [ ! -e "$ROOT/patches/greeter/0001-greet-world.diff" ]
  # the result is what git apply makes of it at v1.1.0
  git clone -q "$UPSTREAM" "$BATS_TEST_TMPDIR/work"
  git -C "$BATS_TEST_TMPDIR/work" checkout -q v1.1.0
  run git -C "$BATS_TEST_TMPDIR/work" apply --check "$ROOT/patches/greeter/0002-shout-trims.diff"
  assert_success
  # refresh of a canonical series writes nothing; a second upgrade has nothing to do
  run pk refresh greeter
  assert_success
  assert_output --partial "0 of 1 patches rewritten"
  run pk upgrade greeter
  assert_success
  assert_output --partial "no newer upstream release"
  # up to date is JSON too with -o json
  run pk upgrade greeter -o json
  assert_success
  run json_get '[j.image, j.ok, j.upToDate, j.message.startsWith("no newer upstream release")].join(" ")' <<<"$output"
  assert_output "greeter true true true"
}

@test "upgrade -o json: the pin, the fates and the gate" {
  run pk upgrade greeter -o json --dry-run
  assert_success
  run json_get '[j.pin.from, j.pin.to, j.patches.map(p => p.fate).join(","), j.gate.ok, j.ok].join(" ")' <<<"$output"
  assert_output "v1.0.0 v1.1.0 dropped,refreshed true true"
}

@test "refresh rewrites a non-canonical patch once; verify warns before, not after" {
  # no patch of the example is canonical: patchkit did not write the series,
  # so the canonical check is a skip until the spec opts in
  run pk verify greeter -o json
  assert_success
  run json_get 'j.checks.filter(c => c.check == "canonical").map(c => c.status + ": " + c.message.split(",")[0]).join("\n")' <<<"$output"
  assert_output "skip: a backport keeps the text of its upstream commit
skip: no patch is in the text patchkit writes"
  sed -i 's|^patches: patches/greeter$|patches: {dir: patches/greeter, canonical: true}|' "$ROOT/images/greeter/patchkit.yaml"
  run pk verify greeter
  assert_success
  assert_output --partial "warn canonical"
  run pk refresh greeter 0002-shout-trims.diff
  assert_success
  assert_output --partial "rewrote patches/greeter/0002-shout-trims.diff"
  cp "$ROOT/patches/greeter/0002-shout-trims.diff" "$BATS_TEST_TMPDIR/once"
  run pk refresh greeter 0002-shout-trims.diff
  assert_output --partial "0 of 1 patches rewritten"
  run cmp "$BATS_TEST_TMPDIR/once" "$ROOT/patches/greeter/0002-shout-trims.diff"
  assert_success
  run pk apply greeter --check
  assert_success
}

@test "refresh of a patch not in the series is a bad invocation" {
  run pk refresh greeter 9999-nope.diff
  assert_failure 2
}

@test "upgrade --to a ref upstream lacks: exit 2, nothing written" {
  cp -R "$ROOT" "$BATS_TEST_TMPDIR/before"
  run pk upgrade greeter --to v9.9.9
  assert_failure 2
  run diff -r "$BATS_TEST_TMPDIR/before" "$ROOT"
  assert_success
}

@test "upgrade -o github: annotations only, never the text" {
  run pk upgrade greeter -o github --dry-run
  assert_success
  assert_line --regexp '^::notice file=patches/greeter/0001-greet-world.diff,title=patchkit upgrade%3A dropped::0001-greet-world.diff: .*87c8eb0d69c4'
  assert_line --regexp '^::notice title=patchkit upgrade::greeter: v1.0.0 \([0-9a-f]{12}\) -> v1.1.0 \([0-9a-f]{12}\) in images/greeter/patchkit.yaml: ok \(dry run: nothing was written\)$'
  # every line is a workflow command: no text fell through
  run grep -vc '^::' <<<"$output"
  assert_output "0"
}

@test "refresh -o markdown and -o github: its own forms, not the text" {
  sed -i 's|^patches: patches/greeter$|patches: {dir: patches/greeter, canonical: true}|' "$ROOT/images/greeter/patchkit.yaml"
  cp -R "$ROOT" "$BATS_TEST_TMPDIR/before"
  run pk refresh greeter -o markdown
  assert_success
  assert_line '### patchkit refresh `greeter` at `v1.0.0`'
  assert_line '| `patches/greeter/0002-shout-trims.diff` | yes |'
  assert_line '| `patches/greeter/0001-greet-world.diff` | yes |'
  assert_line 'greeter: 2 of 2 patches rewritten canonically at v1.0.0.'
  # written once: the second run rewrites nothing, and says so as annotations
  run pk refresh greeter -o github
  assert_success
  assert_output '::notice title=patchkit refresh::greeter: 0 of 2 patches rewritten canonically at v1.0.0'
}

@test "upgrade of a chart unit -o github or markdown: exit 2 before anything is fetched" {
  mkdir -p "$ROOT/charts/x"
  printf 'kind: ConfigMap\n' > "$ROOT/charts/x/x.yaml"
  cat > "$ROOT/patchkit-charts.yaml" <<'YAML'
charts:
  - dir: ./charts/x
    upstream:
      url: http://127.0.0.1:9/{version}/x.yaml
    version: 1.0.0
    series:
      tool: patch
      args: -p1
      patches: []
YAML
  cp -R "$ROOT" "$BATS_TEST_TMPDIR/before"
  for f in github markdown; do
    run "$PATCHKIT" --root "$ROOT" --cache-dir "$CACHE" --offline upgrade charts/x --to 1.1.0 -o "$f"
    assert_failure 2
    assert_line "patchkit: upgrade of a chart unit: -o $f is not supported; use text or json"
  done
  # text gets as far as the fetch (refused offline): the refusal came first
  run "$PATCHKIT" --root "$ROOT" --cache-dir "$CACHE" --offline upgrade charts/x --to 1.1.0
  assert_failure 2
  assert_output "patchkit: offline: http://127.0.0.1:9/1.1.0/x.yaml 1.1.0 is not in the chart cache $CACHE/charts: run once without --offline to fetch it"
  run diff -r "$BATS_TEST_TMPDIR/before" "$ROOT"
  assert_success
}

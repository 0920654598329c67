#!/usr/bin/env bats
# patchkit apply, end to end on the greeter example.

setup() {
  load helpers
  greeter_repo
}

@test "apply --check: the series applies to the pin, exit 0" {
  run pk apply greeter --check
  assert_success
  assert_output --partial "greeter: file://$UPSTREAM at v1.0.0"
  assert_output --partial "applied  patches/greeter/0001-greet-world.diff"
  assert_output --partial "applied  patches/greeter/0002-shout-trims.diff"
}

@test "apply --out writes the tree git apply would" {
  run pk apply greeter --out "$BATS_TEST_TMPDIR/out"
  assert_success
  git clone -q "$UPSTREAM" "$BATS_TEST_TMPDIR/oracle"
  git -C "$BATS_TEST_TMPDIR/oracle" -c advice.detachedHead=false checkout -q v1.0.0
  git -C "$BATS_TEST_TMPDIR/oracle" apply --whitespace=error "$ROOT"/patches/greeter/*.diff
  rm -rf "$BATS_TEST_TMPDIR/oracle/.git"
  # the tree is exactly what git apply writes; patchkit's ownership record
  # is beside it, outside the tree
  [ -f "$BATS_TEST_TMPDIR/.out.patchkit-out" ]
  run diff -r "$BATS_TEST_TMPDIR/oracle" "$BATS_TEST_TMPDIR/out"
  assert_success
}

@test "apply --out never replaces what patchkit did not write" {
  mkdir -p "$BATS_TEST_TMPDIR/work"
  echo mine >"$BATS_TEST_TMPDIR/work/notes.txt"
  run pk apply greeter --out "$BATS_TEST_TMPDIR/work" --force
  assert_failure 2
  assert_output --partial "patchkit did not write it"
  [ "$(cat "$BATS_TEST_TMPDIR/work/notes.txt")" = mine ]
  run pk apply greeter --out "$ROOT"
  assert_failure 2
  assert_output --partial "holds the repository root"
  [ -f "$ROOT/images/greeter/patchkit.yaml" ]
  pk -o json apply greeter --out "$ROOT" >"$BATS_TEST_TMPDIR/err.json" 2>/dev/null || true
  run json_get 'j.exitCode + " " + j.kind' <"$BATS_TEST_TMPDIR/err.json"
  assert_output "2 usage"
  run pk apply greeter --out "$BATS_TEST_TMPDIR/new"
  assert_success
  run pk apply greeter --out "$BATS_TEST_TMPDIR/new"
  assert_failure 2
  assert_output --partial "--force replaces it"
  run pk apply greeter --out "$BATS_TEST_TMPDIR/new" --force
  assert_success
}

@test "apply -o json is one valid object" {
  run pk apply greeter --check -o json
  assert_success
  run json_get 'j.image + " " + j.ok + " " + j.patches.length + " " + j.upstream.commit.length' <<<"$output"
  assert_success
  assert_output "greeter true 2 40"
}

@test "apply at a release that carries patch 0001: exit 1, nothing written" {
  run pk apply greeter --ref v1.1.0 --out "$BATS_TEST_TMPDIR/out"
  assert_failure 1
  assert_output --partial "FAILED   patches/greeter/0001-greet-world.diff"
  assert_output --partial "0001-greet-world.diff:11:"
  [ ! -e "$BATS_TEST_TMPDIR/out" ]
}

@test "a second run needs no network: --offline" {
  run pk apply greeter --check
  assert_success
  mv "$UPSTREAM" "$UPSTREAM.gone"
  run pk --offline apply greeter --check
  assert_success
}

@test "an ssh upstream goes through GIT_SSH_COMMAND, with no ssh-agent" {
  # A fake ssh, as git's own tests use: it logs its arguments and runs the
  # remote command here. A CI job's deploy key is GIT_SSH_COMMAND='ssh -i key'.
  mkdir "$BATS_TEST_TMPDIR/bin"
  printf '#!/bin/sh\nprintf "%%s\\n" "$*" >> "%s"\nwhile [ $# -gt 1 ]; do shift; done\nexec sh -c "$1"\n' \
    "$BATS_TEST_TMPDIR/ssh.log" > "$BATS_TEST_TMPDIR/bin/ssh"
  chmod +x "$BATS_TEST_TMPDIR/bin/ssh"
  unset SSH_AUTH_SOCK
  export GIT_SSH_COMMAND="$BATS_TEST_TMPDIR/bin/ssh -i deploy-key"
  run "$PATCHKIT" --root "$ROOT" --cache-dir "$CACHE" \
    --upstream-url "git@example.invalid:$UPSTREAM" apply greeter --check
  assert_success
  assert_output --partial "applied  patches/greeter/0002-shout-trims.diff"
  # the listing and git fetch both ran it, as git ls-remote runs it
  run cat "$BATS_TEST_TMPDIR/ssh.log"
  assert_line -- "-i deploy-key git@example.invalid git-upload-pack '$UPSTREAM'"
  assert_line -- "-i deploy-key -o SendEnv=GIT_PROTOCOL git@example.invalid git-upload-pack '$UPSTREAM'"
}

@test "--offline with an empty cache: exit 2 with a hint" {
  run pk --offline apply greeter --check
  assert_failure 2
  assert_output --partial "without --offline"
}

@test "bad spec: exit 2 naming file, line and key" {
  printf 'upstream:\n  url: x\n  ref: v1\n  colour: red\npatches: p\n' > "$ROOT/images/greeter/patchkit.yaml"
  run pk apply greeter --check
  assert_failure 2
  assert_output --partial "images/greeter/patchkit.yaml:4: upstream.colour: unknown key"
}

@test "an upstream URL git would not fetch plainly: exit 2 naming file and line, nothing run" {
  # ext:: is git's remote helper that runs a command; an ssh host that
  # starts with - would reach ssh as an option.
  printf 'upstream:\n  url: "ext::sh -c touch%% %s"\n  ref: v1\npatches: patches/greeter\n' \
    "$BATS_TEST_TMPDIR/ran" > "$ROOT/images/greeter/patchkit.yaml"
  run "$PATCHKIT" --root "$ROOT" --cache-dir "$CACHE" apply greeter --check
  assert_failure 2
  assert_output --partial "images/greeter/patchkit.yaml:2: upstream.url: upstream ext::sh -c touch% $BATS_TEST_TMPDIR/ran: ext:: is git's remote helper syntax"
  run "$PATCHKIT" --root "$ROOT" --cache-dir "$CACHE" --upstream-url 'ssh://-oProxyCommand=touch%20ran/x' \
    apply greeter --check
  assert_failure 2
  assert_output --partial "--upstream-url: upstream ssh://-oProxyCommand=touch%20ran/x: strange hostname '-oProxyCommand=touch ran' blocked"
  [ ! -e "$BATS_TEST_TMPDIR/ran" ]
  [ ! -e ran ]
  [ ! -e "$CACHE" ]
}

@test "hostile patch: exit 2 naming patch and line, nothing written" {
  printf 'diff --git a/../evil b/../evil\nnew file mode 100644\n--- /dev/null\n+++ b/../evil\n@@ -0,0 +1 @@\n+owned\n' > "$ROOT/patches/greeter/0003-evil.patch"
  run pk apply greeter --out "$BATS_TEST_TMPDIR/out"
  assert_failure 2
  assert_output --partial "patches/greeter/0003-evil.patch:1: unsafe path"
  [ ! -e "$BATS_TEST_TMPDIR/out" ]
  [ ! -e "$BATS_TEST_TMPDIR/evil" ]
}

@test "bad invocation: exit 2" {
  run pk apply
  assert_failure 2
  run pk -o yaml apply greeter
  assert_failure 2
  run pk frobnicate
  assert_failure 2
}

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

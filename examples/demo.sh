#!/usr/bin/env bash
# demo.sh [PATCHKIT]: run patchkit's pipeline on the embedded greeter example,
# offline. The upstream is generated from examples/greeter/upstream into a
# temporary directory; the cache and outputs live there too and are removed
# at the end.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pk=$(realpath "${1:-$here/../bin/patchkit}")
work=$(mktemp -d "${TMPDIR:-/tmp}/patchkit-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT

root="$work/repo"
cp -R "$here/greeter" "$root"
rm -rf "$root/upstream"
"$here/mkupstream.sh" "$here/greeter/upstream" "$work/upstream"

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
pkw() {
  step "patchkit $*"
  "$pk" --root "$root" --cache-dir "$work/cache" --upstream-url "file://$work/upstream" "$@"
}

echo "greeter upstream generated at $work/upstream:"
git -C "$work/upstream" log --oneline --decorate

pkw apply greeter --check
pkw apply greeter --out "$work/out"
step "diff -ru upstream v1.0.0 patched tree"
git -C "$work/upstream" archive --prefix=pristine/ v1.0.0 | tar -x -C "$work"
(cd "$work" && diff -ru pristine out) || true

# The cache now holds what apply needs (the pin at depth 1): a second apply
# needs no network.
pkw --offline apply greeter --check -o json

# On v1.1.0 upstream carries 0001 itself, so it no longer applies. The first
# run at another tag fetches that tag (at depth 1), so it is not --offline.
set +e
pkw apply greeter --check --ref v1.1.0
rc=$?
set -e
echo "exit code $rc (1: a patch does not apply at v1.1.0)"
[ "$rc" -eq 1 ]

# Which upstream release made each patch obsolete? 0001 landed in v1.1.0.
# obsolete-check walks history, so its first run deepens the cache that apply
# filled at depth 1 (from the local file:// upstream here); later runs may be
# --offline.
set +e
pkw obsolete-check greeter
rc=$?
set -e
echo "exit code $rc (1: upstream carries a patch at a scanned ref)"
[ "$rc" -eq 1 ]

# The regression gate: the injected test passes on the series, fails on the
# pin, and each patch owns the subtests its Test: header names.
pkw --offline gate greeter

# A native build into an OCI layout (no registry, no daemon), stamped into
# values.yaml; the same inputs give the same digest.
pkw --offline build greeter --oci-layout "$work/oci" --stamp
step "cat images/greeter/values.yaml"
cat "$root/images/greeter/values.yaml"
digest=$("$pk" --root "$root" --cache-dir "$work/cache" --upstream-url "file://$work/upstream" \
  --offline -o json build greeter --oci-layout "$work/oci2" | sed -n 's/^  "digest": "\(.*\)",$/\1/p')
echo "rebuilt: $digest"
grep -q "tag: v1.0.0@$digest" "$root/images/greeter/values.yaml"

set +e
pkw stamp greeter --digest sha256:1234
rc=$?
set -e
echo "exit code $rc (2: not a sha256 digest)"
[ "$rc" -eq 2 ]

echo
echo "demo done"

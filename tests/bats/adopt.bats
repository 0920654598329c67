#!/usr/bin/env bats
# patchkit init, then apply --check, obsolete-check and verify on every unit
# of a generated cozystack-shaped monorepo, fetching through a git
# url.<base>.insteadOf mirror (GIT_CONFIG_GLOBAL), with no --upstream-url.

setup() {
  load helpers
  ROOT=$BATS_TEST_TMPDIR/repo
  MIRROR=$BATS_TEST_TMPDIR/mirror
  CACHE=$BATS_TEST_TMPDIR/cache
  sh "$REPO_ROOT/internal/adopt/testdata/mkmonorepo.sh" "$ROOT" "$MIRROR"
  printf '[url "file://%s/"]\n\tinsteadOf = https://github.com/\n' "$MIRROR" >"$BATS_TEST_TMPDIR/gitconfig"
  export GIT_CONFIG_GLOBAL=$BATS_TEST_TMPDIR/gitconfig
}

pkm() {
  "$PATCHKIT" --root "$ROOT" --cache-dir "$CACHE" "$@"
}

UNITS="kubeovn piraeus-server linstor-csi kilo kamaji"

@test "init writes a spec for every readable unit and lists the unreadable one, exit 1" {
  run pkm init
  assert_failure 1
  for u in $UNITS; do
    assert_output --regexp "wrote packages/[a-z]+/[a-z]+/images/$u/patchkit.yaml"
  done
  assert_output --partial "cloud-provider/Dockerfile: could not read"
  assert_output --partial 'whose Makefile variable CP_VERSION is computed by $(shell ...)'
  assert_output --partial "1 of 6 units could not be read"
  [ ! -e "$ROOT/packages/apps/kubernetes/images/cloud-provider/patchkit.yaml" ]
  run grep -c 'makefile-var: LINSTOR_VERSION' "$ROOT/packages/system/linstor/images/piraeus-server/patchkit.yaml"
  assert_output 1
}

@test "init -o json: an array of dir, spec, upstream url and resolved ref, patches" {
  run pkm init -o json
  assert_failure 1
  run json_get 'j.filter(u => u.status == "written").map(u => u.dir.split("/").pop() + "=" + u.upstream.ref + "@" + (u.spec == u.dir + "/patchkit.yaml") + (u.patches == u.dir + "/patches")).sort().join(" ")' <<<"$output"
  assert_output --regexp '^kamaji=26.3.6-edge@truetrue kilo=[0-9a-f]{40}@truetrue kubeovn=v1.15.10@truetrue linstor-csi=v1.11.2@truetrue piraeus-server=v1.33.3@truetrue$'
}

@test "after init, apply --check, obsolete-check and verify run on every unit through the mirror" {
  run pkm init
  assert_failure 1
  for u in $UNITS; do
    run pkm apply --check "$u"
    assert_success
    assert_output --partial ": ok"
  done
  bats_require_minimum_version 1.5.0
  run --separate-stderr pkm obsolete-check -o json
  assert_failure 1 # kubeovn's retries patch is in v1.15.11
  # in a pipe, one progress line per unit on stderr; stdout is the JSON alone
  [ "$(grep -c '^patchkit: .*ref(s)' <<<"$stderr")" -eq 5 ]
  run json_get 'j.map(o => o.image + ":" + o.patches.filter(p => p.obsoletedBy).map(p => p.obsoletedBy).join(",")).sort().join(" ")' <<<"$output"
  assert_output "kamaji: kilo: kubeovn:v1.15.11 linstor-csi: piraeus-server:"
  run pkm verify
  assert_success
  assert_output --partial "pass pin              v1.33.3 (read from packages/system/linstor/Makefile:6)"
  # init wrote patches.recount for the Dockerfile's git apply --recount
  assert_output --partial "pass dockerfile       packages/system/linstor/images/linstor-csi/Dockerfile applies packages/system/linstor/images/linstor-csi/patches in one git apply, as patchkit does"
  assert_output --partial "pass versions         packages/system/kubeovn/images/kubeovn/Dockerfile:2 holds 1.15.10 (VERSION)"
  # the cache is keyed by the spec's URL, never the mirror's
  run ls "$CACHE"
  assert_output --partial "github.com"
  refute_output --partial "mirror"
}

@test "a pin edited in the Makefile is what every command uses" {
  pkm init || true
  git -C "$MIRROR/LINBIT/linstor-server.git" tag v1.34.0
  sed -i 's/^LINSTOR_VERSION ?= .*/LINSTOR_VERSION ?= 1.34.0/' "$ROOT/packages/system/linstor/Makefile"
  run pkm apply --check piraeus-server -o json
  assert_success
  run json_get 'j.upstream.ref + " " + j.unit' <<<"$output"
  assert_output "v1.34.0 packages/system/linstor/images/piraeus-server"
}

@test "a copied pin that disagrees with the Dockerfile fails verify's pin check" {
  pkm init || true
  spec=$ROOT/packages/system/kubeovn/images/kubeovn/patchkit.yaml
  sed -i '/^  ref:$/,/^    #/d' "$spec"
  sed -i 's|^  url: \(.*\)|  url: \1\n  ref: v1.15.11|' "$spec"
  run pkm verify kubeovn
  assert_failure 1
  assert_output --partial "FAIL pin"
  assert_output --partial "the spec pins v1.15.11 (copied into the spec), but packages/system/kubeovn/images/kubeovn/Dockerfile builds v1.15.10"
}

@test "an ambiguous image name is bad input listing the paths, exit 2" {
  pkm init || true
  mkdir -p "$ROOT/packages/extra/images/kilo"
  cp "$ROOT/packages/system/kilo/images/kilo/patchkit.yaml" "$ROOT/packages/extra/images/kilo/"
  run pkm apply --check kilo
  assert_failure 2
  assert_output --partial "name one of packages/extra/images/kilo, packages/system/kilo/images/kilo"
  run pkm apply --check packages/system/kilo/images/kilo
  assert_success
}

@test "init reads the recipe's yq stamps; verify tells a digest from another series apart" {
  pkm init || true
  spec=$ROOT/packages/system/kamaji/images/kamaji/patchkit.yaml
  run grep -c 'format: --migrate-image={{.Reference}}' "$spec"
  assert_output 1
  # The committed digest predates patchkit: unknown provenance, a warning.
  run pkm verify kamaji
  assert_success
  assert_output --partial "unknown provenance"
  d=sha256:$(printf '%064d' 7)
  # The package is a Helm chart: the stamp record must stay out of it.
  printf 'apiVersion: v2\nname: kamaji\nversion: 0.1.0\n' >"$ROOT/packages/system/kamaji/Chart.yaml"
  REGISTRY=ghcr.io/o IMAGE_TAG=v1.2.3 run pkm stamp kamaji --digest "$d"
  assert_success
  run cat "$ROOT/packages/system/kamaji/values.yaml"
  assert_line "    - --migrate-image=ghcr.io/o/kamaji:v1.2.3@$d"
  assert_line "    repository: ghcr.io/o/kamaji"
  [ ! -e "$ROOT/packages/system/kamaji/.patchkit-stamps.json" ]
  run grep -c '"file": "kamaji/values.yaml"' "$ROOT/packages/system/.patchkit-stamps.json"
  assert_output 3
  run pkm verify kamaji
  assert_success
  refute_output --partial "unknown provenance"
  # A record an earlier patchkit left inside the chart is still read, and
  # the next stamp moves it out.
  sed 's|"kamaji/values.yaml"|"values.yaml"|' "$ROOT/packages/system/.patchkit-stamps.json" >"$ROOT/packages/system/kamaji/.patchkit-stamps.json"
  rm "$ROOT/packages/system/.patchkit-stamps.json"
  run pkm verify kamaji
  assert_success
  refute_output --partial "unknown provenance"
  REGISTRY=ghcr.io/o IMAGE_TAG=v1.2.3 run pkm stamp kamaji --digest "$d"
  assert_success
  [ ! -e "$ROOT/packages/system/kamaji/.patchkit-stamps.json" ]
  run grep -c '"file": "kamaji/values.yaml"' "$ROOT/packages/system/.patchkit-stamps.json"
  assert_output 3
  # The series changes after the stamp: stale, naming the patch.
  printf '%s\n' "diff --git a/NEW b/NEW" "new file mode 100644" "--- /dev/null" "+++ b/NEW" "@@ -0,0 +1 @@" "+x" \
    >"$ROOT/packages/system/kamaji/images/kamaji/patches/zz-new.diff"
  run pkm verify kamaji
  assert_success
  assert_output --partial "since then: added zz-new.diff"
  # stale: fail makes it a failure.
  sed -i 's|^    format: --migrate-image=.*|&\n    stale: fail|' "$spec"
  run pkm verify kamaji
  assert_failure 1
  assert_output --partial "since then: added zz-new.diff"
}

@test "cozystack's shape as it stands: init, matrix, verify, obsolete-check and upgrade with no glue" {
  rm -rf "$ROOT" "$MIRROR"
  sh "$REPO_ROOT/internal/adopt/testdata/mkadopt.sh" "$ROOT" "$MIRROR"
  run pkm init
  assert_failure 1
  assert_output --partial "wrote packages/system/objectstorage/images/cosi/patchkit.yaml: https://github.com/kubernetes-sigs/container-object-storage-interface at "
  run pkm matrix
  assert_failure 1
  # the vendored kube-ovn chart (a chart unit) selects its package
  assert_line --index 0 '["packages/system/kamaji/images/kamaji","packages/system/kubeovn","packages/system/kubeovn/images/kubeovn","packages/system/linstor/images/linstor-csi","packages/system/linstor/images/piraeus-server"]'
  assert_output --partial "note: packages/system/kilo/images/kilo is not built"
  run pkm verify
  assert_failure 2
  assert_output --partial "gone: FAILED"
  assert_output --partial "kubeovn: ok"
  refute_output --partial "warn canonical"
  run pkm obsolete-check
  assert_failure 2
  assert_output --partial "gone: not checked: "
  assert_output --partial "0001-retries.diff  present   v1.15.11"
  run pkm upgrade kubeovn
  assert_success
  run grep -h 1.15.1 "$ROOT/packages/system/kubeovn/images/kubeovn/Dockerfile" "$ROOT/packages/system/kubeovn/charts/kube-ovn/Chart.yaml"
  assert_output 'ARG VERSION="1.15.11"
ARG TAG="v1.15.11"
version: v1.15.11
appVersion: "1.15.11"'
}

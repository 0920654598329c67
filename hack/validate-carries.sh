#!/usr/bin/env bash
# validate-carries.sh: patchkit obsolete-check's verdicts on real carried
# patches, beside the git CLI's at every scanned release.
#
# For each carry (a list below, or the file given as $1), it lays out a
# scratch repository (images/NAME/patchkit.yaml pointing at a local upstream
# clone, patches/NAME/ with the patch files), runs
# `patchkit obsolete-check NAME -o json`, then at every scanned ref replays
# the series with the git CLI on a temporary index (no checkout):
# `git apply --cached -R --check` and `git apply --cached --check` of each
# patch, applying the patches git applies forward before testing the next
# (as patchkit does). It prints one markdown row per carry, patch and run of
# refs with the same verdicts, and whether they agree:
#
#   git -R --check ok   -> patchkit must say present (reverse-apply)
#   git --check ok      -> patchkit must say applies
#   neither             -> patchkit must say neither (present by patch-id or
#                          carried, superseded, partial or conflict); the row
#                          is marked "judge" for a reader to check
#
# Needs: git, jq, go (or PATCHKIT=/path/to/patchkit), and local clones:
#   MIRROR     (required) where upstream clones live as OWNER+NAME/repo
#   COZY       a cozystack clone, for the cozystack patches (default $MIRROR/cozystack+cozystack/repo)
#   UPSTREAMS  where the usable bare copies are made, and kept for the next
#              run (default: a scratch directory removed at exit): a full
#              `git clone --bare --no-local` of the mirror, or, when the mirror
#              is a partial clone that cannot serve every object, a fetch of
#              its tags and branches with --shallow-since=$SINCE (default
#              2025-06-01) plus the pin (a shallow boundary is the end of
#              history for patchkit and git alike)
# A carry whose upstream clone is missing is listed as skipped.
#
# Carry lines: NAME|OWNER+REPO|PIN|RELEASES|BRANCHES|PATCH...
# where BRANCHES is comma-separated or -, and each PATCH is coz:PATH (a file
# of the cozystack clone at HEAD) or file:PATH (relative to this repository).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
: "${MIRROR:?MIRROR must name the directory of upstream clones (OWNER+NAME/repo)}"
COZY=${COZY:-$MIRROR/cozystack+cozystack/repo}
SINCE=${SINCE:-2025-06-01}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
UPSTREAMS=${UPSTREAMS:-$work/upstreams}

if [[ -z "${PATCHKIT:-}" ]]; then
	(cd "$here" && CGO_ENABLED=0 go build -o "$work/patchkit" ./cmd/patchkit)
	PATCHKIT=$work/patchkit
fi

default_carries() {
	cat <<'EOF'
kubeovn-series|kubeovn+kube-ovn|v1.15.10|v1.15.*|release-1.15,master|file:patches/kubeovn/0001-vmi-migration-requeue-unknown-node.ref.diff file:patches/kubeovn/0002-vmi-migration-requeue-missing-target-pod.diff
kubeovn-cozystack|kubeovn+kube-ovn|v1.15.10|v1.15.*|release-1.15,master|coz:packages/system/kubeovn/images/kubeovn/patches/fix-keepvmip-portgroup.diff
kamaji|clastix+kamaji|26.3.6-edge|2*-edge|-|coz:packages/system/kamaji/images/kamaji/patches/fix-datastore-unused-deletion.diff coz:packages/system/kamaji/images/kamaji/patches/fix-kubelet-config-compat.diff
multus|k8snetworkplumbingwg+multus-cni|v4.3.0|v4.*|master|coz:packages/system/multus/images/multus-cni/patches/fix-del-without-cache.diff
kilo|squat+kilo|944dff5745d747c06555a964c2137b9a986ff6ec|*|main|coz:packages/system/kilo/images/kilo/patches/feat-add-cross-mesh-granularity.diff
linstor-csi|piraeusdatastore+linstor-csi|v1.11.2|v1.*|master|coz:packages/system/linstor/images/linstor-csi/patches/001-relocate-after-clone-restore.diff coz:packages/system/linstor/images/linstor-csi/patches/002-protocol-c-override-for-dual-attach.diff
cosi|kubernetes-sigs+container-object-storage-interface|v0.2.2|v0.*|main|coz:packages/system/objectstorage-controller/images/objectstorage/patches/91-bucketaccess-conflict-retry.diff coz:packages/system/objectstorage-controller/images/objectstorage/patches/92-bucketclaim-propagate-ready.diff coz:packages/system/objectstorage-controller/images/objectstorage/patches/93-shorten-leaderelection-lease.diff
linstor-server|LINBIT+linstor-server|v1.33.3|v1.*|master|coz:packages/system/linstor/images/piraeus-server/patches/allow-toggle-disk-retry.diff coz:packages/system/linstor/images/piraeus-server/patches/fix-duplicate-tcp-ports.diff coz:packages/system/linstor/images/piraeus-server/patches/fix-luks-header-size.diff coz:packages/system/linstor/images/piraeus-server/patches/retry-adjust-after-stale-bitmap.diff coz:packages/system/linstor/images/piraeus-server/patches/retry-secondary-after-mkfs.diff
keycloak-operator|epam+edp-keycloak-operator|facbc36b64e37d4b70fe98aabfdd5cc514315201|v1.*|master|coz:packages/system/keycloak-operator/images/keycloak-operator/patches/keycloakrealmuser-unset-roles.diff coz:packages/system/keycloak-operator/images/keycloak-operator/patches/pr309.diff
EOF
}

# prepare_upstream REPO PIN BRANCHES: prints the path of a usable bare copy
# of $MIRROR/REPO/repo.
prepare_upstream() {
	local src=$MIRROR/$1/repo dst=$UPSTREAMS/$1.git
	if [[ ! -d "$dst" ]]; then
		mkdir -p "$UPSTREAMS"
		if ! git clone -q --bare --no-local "$src" "$dst.tmp" 2>/dev/null; then
			rm -rf "$dst.tmp"
			git init -q --bare "$dst.tmp"
			local specs=('refs/tags/*:refs/tags/*')
			[[ $3 == - ]] || for b in ${3//,/ }; do specs+=("refs/heads/$b:refs/heads/$b"); done
			git -C "$dst.tmp" fetch -q --shallow-since="$SINCE" "file://$src" "${specs[@]}" >&2
		fi
		mv "$dst.tmp" "$dst"
	fi
	if ! git -C "$dst" cat-file -e "$2^{commit}" 2>/dev/null; then
		git -C "$dst" fetch -q --depth=1 "file://$src" "$2" >&2 || true
	fi
	echo "$dst"
}

# patch_text SPEC: the patch file's bytes.
patch_text() {
	case $1 in
	coz:*) git -C "$COZY" show "HEAD:${1#coz:}" ;;
	file:*) cat "$here/${1#file:}" ;;
	esac
}

# oracle_patch FILE UPSTREAM: what git applies for FILE: a reference file's
# commit, else the file.
oracle_patch() {
	local ref
	ref=$(sed -n 's/^Reference: *\([0-9a-f]\{40\}\) *$/\1/p' "$1" | head -1)
	if [[ -n "$ref" ]]; then
		git -C "$2" show --format= --binary "$ref"
	else
		cat "$1"
	fi
}

# git_verdicts UPSTREAM COMMIT PATCH...: one word per patch: rev, fwd or
# neither, replaying the series on a temporary index at COMMIT.
git_verdicts() {
	local up=$1 commit=$2 idx out=()
	shift 2
	idx=$work/index
	rm -f "$idx"
	GIT_INDEX_FILE=$idx git -C "$up" read-tree "$commit"
	for p in "$@"; do
		if GIT_INDEX_FILE=$idx git -C "$up" apply --cached -R --check "$p" 2>/dev/null; then
			out+=(rev)
		elif GIT_INDEX_FILE=$idx git -C "$up" apply --cached --check "$p" 2>/dev/null; then
			out+=(fwd)
			GIT_INDEX_FILE=$idx git -C "$up" apply --cached "$p"
		else
			out+=(neither)
		fi
	done
	echo "${out[@]}"
}

agree() { # GIT STATUS VIA
	case $1 in
	rev) [[ $2 == present && $3 == reverse-apply ]] && echo yes || echo NO ;;
	fwd) [[ $2 == applies ]] && echo yes || echo NO ;;
	*) [[ $2 != applies && $3 != reverse-apply ]] && echo judge || echo NO ;;
	esac
}

run_carry() {
	local name=$1 repo=$2 pin=$3 releases=$4 branches=$5 specs=$6
	local up root=$work/$name
	if [[ ! -d "$MIRROR/$repo/repo" ]]; then
		echo "| $name | - | - | - | - | skipped: no clone at $MIRROR/$repo/repo |"
		return
	fi
	up=$(prepare_upstream "$repo" "$pin" "$branches")
	mkdir -p "$root/images/$name" "$root/patches/$name" "$work/oracle/$name"
	{
		echo "upstream:"
		echo "  url: file://$up"
		echo "  ref: \"$pin\""
		echo "  releases: \"$releases\""
		[[ $branches == - ]] || echo "  branches: [${branches}]"
		echo "patches: patches/$name"
	} >"$root/images/$name/patchkit.yaml"
	local n=0 files=() oracles=()
	for s in $specs; do
		n=$((n + 1))
		local f
		f=$(basename "${s#*:}")
		[[ $f =~ ^[0-9]{4}- ]] || f=$(printf '%04d' $n)-$f
		f=$root/patches/$name/$f
		patch_text "$s" >"$f"
		files+=("$f")
		oracles+=("$work/oracle/$name/$n.diff")
		oracle_patch "$f" "$up" >"$work/oracle/$name/$n.diff" 2>/dev/null
	done
	local json=$work/$name.json rc=0
	"$PATCHKIT" --root "$root" --cache-dir "$work/cache" obsolete-check "$name" -o json >"$json" 2>"$work/$name.err" || rc=$?
	if [[ $rc -ge 2 ]]; then
		echo "| $name | - | - | - | - | patchkit failed: $(head -c 300 "$work/$name.err" | tr '\n|' '  ') |"
		return
	fi
	local skipped
	skipped=$(jq -r '.skipped | length' "$json")
	echo "<!-- $name: pin $pin, $(jq -r '.refs | length' "$json") refs scanned, $skipped release tags skipped -->"
	# One line per ref: name commit, then per patch status/via.
	local prev="" first="" last="" row=""
	while IFS=$'\t' read -r ref commit; do
		local gv i=0 cur=""
		read -r -a gv <<<"$(git_verdicts "$up" "$commit" "${oracles[@]}")"
		for f in "${files[@]}"; do
			local st via
			st=$(jq -r --argjson i "$i" --arg r "$ref" '.patches[$i].results[] | select(.ref == $r) | .status' "$json")
			via=$(jq -r --argjson i "$i" --arg r "$ref" '.patches[$i].results[] | select(.ref == $r) | .via' "$json")
			cur+="$(basename "$f")|$st ($via)|${gv[$i]}|$(agree "${gv[$i]}" "$st" "$via");"
			i=$((i + 1))
		done
		if [[ $cur == "$prev" ]]; then
			last=$ref
			continue
		fi
		[[ -z "$prev" ]] || emit "$name" "$first" "$last" "$prev"
		prev=$cur first=$ref last=$ref
	done < <(jq -r '.refsInfo[] | [.ref, .commit] | @tsv' "$json")
	[[ -z "$prev" ]] || emit "$name" "$first" "$last" "$prev"
	jq -r --arg n "$name" '.patches[] | "<!-- \($n) \(.file): obsoletedBy \(.obsoletedBy // "-") \(.obsoletedByPrerelease // "") neededAgainAt \(.neededAgainAt // "-") -->"' "$json"
}

emit() { # NAME FIRST LAST ROWS
	local refs=$2
	[[ $2 == "$3" ]] || refs="$2..$3"
	local IFS=';'
	for r in $4; do
		[[ -n "$r" ]] || continue
		echo "| $1 | $refs | ${r//|/ | } |"
	done
}

echo "| carry | refs | patch | patchkit (via) | git CLI | agree |"
echo "|---|---|---|---|---|---|"
carries=$(if [[ $# -gt 0 ]]; then cat "$1"; else default_carries; fi)
while IFS='|' read -r name repo pin releases branches specs; do
	[[ -n "$name" && $name != \#* ]] || continue
	run_carry "$name" "$repo" "$pin" "$releases" "$branches" "$specs"
done <<<"$carries"

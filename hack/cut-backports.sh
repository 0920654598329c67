#!/usr/bin/env bash
# cut-backports.sh: real backports, graded by the git CLI, as test data for
# the backport grade that `patchkit verify` and `patchkit backport` give
# (internal/backport, TestRealBackports).
#
# Reads internal/backport/testdata/backports/CASES, one line per case:
#   NAME|OWNER+REPO|UPSTREAM_COMMIT|BACKPORT_COMMIT|DIFF_OPTIONS|NOTE
# and, from a clone of each upstream, writes the directory NAME there:
#   patch.diff     the backport commit as a carried patch:
#                  `git format-patch -1 --stdout DIFF_OPTIONS BACKPORT_COMMIT`
#   upstream.diff  the upstream commit's diff, as patchkit reads it from its
#                  cache (backport.Show: `git show --format= --binary ...`)
#   trees          the files either commit touches, at the upstream commit's
#                  parent and at the upstream commit (the rest of the tree
#                  plays no part in the grade): `file parent|commit MODE PATH
#                  SIZE`, then SIZE bytes and a newline
#   case           the sources and the git CLI's grade (`oracle`):
#                    identical   the two diffs are the same bytes once index
#                                lines and the "@@" lines' numbers and
#                                function names are dropped (sed, then cmp);
#                    equivalent  otherwise, `git apply --cached` of the
#                                backport onto the parent's tree succeeds and
#                                `git diff --quiet` finds the result equal to
#                                the upstream commit on every path either
#                                touches;
#                    differs     anything else.
#
# Needs git. The clones: UPSTREAMS/OWNER+REPO.git when UPSTREAMS is set (a
# usable copy, as hack/validate-carries.sh makes), else
# $MIRROR/OWNER+REPO/repo. ONLY=NAME cuts one case. ORACLE_UP=GITDIR prints
# git's grade of the commit pairs on stdin instead (see below).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
out=$here/internal/backport/testdata/backports
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

clone() {
	if [[ -n "${UPSTREAMS:-}" ]]; then
		echo "$UPSTREAMS/$1.git"
	else
		: "${MIRROR:?set MIRROR (OWNER+NAME/repo clones) or UPSTREAMS (OWNER+NAME.git)}"
		echo "$MIRROR/$1/repo"
	fi
}

# normalized UP REV OPTS...: REV's diff (binary data included) without index
# lines and with each "@@" line reduced to "@@".
normalized() {
	local up=$1 rev=$2
	shift 2
	git -C "$up" show --format= --binary --no-color "$@" "$rev" |
		sed -E '/^index [0-9a-f]+\.\.[0-9a-f]+/d; s/^@@ -[0-9]+(,[0-9]+)? \+[0-9]+(,[0-9]+)? @@.*/@@/'
}

# oracle UP M B OPTS...: the git CLI's grade of B (written with OPTS) against M.
oracle() {
	local up=$1 m=$2 b=$3
	shift 3
	if cmp -s <(normalized "$up" "$m") <(normalized "$up" "$b" "$@"); then
		echo identical
		return
	fi
	git -C "$up" show --format= --binary --no-color "$@" "$b" >"$work/b.diff"
	local idx=$work/index tree paths
	rm -f "$idx"
	GIT_INDEX_FILE=$idx git -C "$up" read-tree "$m^"
	if GIT_INDEX_FILE=$idx git -C "$up" apply --cached --whitespace=nowarn "$work/b.diff" 2>/dev/null; then
		tree=$(GIT_INDEX_FILE=$idx git -C "$up" write-tree)
		mapfile -t paths < <(touched "$up" "$m" "$b")
		if git -C "$up" diff --quiet "$m" "$tree" -- "${paths[@]}"; then
			echo equivalent
			return
		fi
	fi
	echo differs
}

# touched UP M B: every path M or B names, both ends of a rename.
touched() {
	{
		git -C "$1" show --format= --name-only --no-renames "$2"
		git -C "$1" show --format= --name-only --no-renames "$3"
	} | sort -u
}

# files UP REV SIDE PATH...: the trees records of the paths REV has.
files() {
	local up=$1 rev=$2 side=$3 p mode id kind size
	shift 3
	for p in "$@"; do
		read -r mode kind id _ < <(git -C "$up" ls-tree "$rev" -- "$p") || continue
		[[ $kind == blob ]] || { echo "cut-backports: $p at $rev is a $kind" >&2; exit 1; }
		size=$(git -C "$up" cat-file -s "$id")
		printf 'file %s %s %s %s\n' "$side" "$mode" "$p" "$size"
		git -C "$up" cat-file blob "$id"
		printf '\n'
	done
}

# ORACLE_UP=GITDIR: only the git CLI's grade of each "UPSTREAM_COMMIT
# BACKPORT_COMMIT" line of stdin, printed after it (hack/backportsurvey).
if [[ -n "${ORACLE_UP:-}" ]]; then
	while read -r m b; do
		echo "$m $b $(oracle "$ORACLE_UP" "$m" "$b")"
	done
	exit 0
fi

while IFS='|' read -r name repo m b opts note; do
	[[ -n "$name" && $name != \#* ]] || continue
	[[ -z "${ONLY:-}" || $name == "$ONLY" ]] || continue
	up=$(clone "$repo")
	m=$(git -C "$up" rev-parse --verify "$m^{commit}")
	b=$(git -C "$up" rev-parse --verify "$b^{commit}")
	diffopts=()
	[[ $opts == - ]] || read -ra diffopts <<<"$opts"
	dir=$out/$name
	rm -rf "$dir"
	mkdir -p "$dir"
	git -C "$up" format-patch -1 --stdout "${diffopts[@]}" "$b" >"$dir/patch.diff"
	git -C "$up" show --format= --binary --no-color --no-ext-diff --no-textconv --diff-merges=first-parent "$m" >"$dir/upstream.diff"
	mapfile -t paths < <(touched "$up" "$m" "$b")
	{
		files "$up" "$m^" parent "${paths[@]}"
		files "$up" "$m" commit "${paths[@]}"
	} >"$dir/trees"
	grade=$(oracle "$up" "$m" "$b" "${diffopts[@]}")
	{
		echo "# $name: cut by hack/cut-backports.sh from $repo; do not edit by hand"
		echo "upstream $repo $m"
		echo "backport $b"
		echo "options ${opts}"
		echo "note $note"
		echo "oracle $grade"
	} >"$dir/case"
	echo "$name: $grade"
done <"$out/CASES"

#!/usr/bin/env bash
# cut-corpus.sh: cut labelled obsolete-check cases from real upstream history
# into small test data (internal/obsolete/testdata/corpus, replayed by
# TestCorpus in internal/obsolete).
#
# Usage: MIRROR=DIR hack/cut-corpus.sh [CASES [OUT]]
#
#   MIRROR  (required) where upstream clones live, as OWNER+NAME/repo (a bare
#           or non-bare git directory; read only, nothing is written there).
#   COZY    a cozystack clone for coz: patch sources
#           (default $MIRROR/cozystack+cozystack/repo).
#   EKS     an aws/eks-distro clone for eks: patch sources
#           (default $MIRROR/aws+eks-distro/repo).
#   CASES   the case list (default internal/obsolete/testdata/corpus/CASES).
#   OUT     where case directories are written (default: CASES' directory).
#   ONLY    cut only the case with this name.
#   KEEP    when set, leave the cases already cut as they are.
#
# A case line is NAME|OWNER+REPO|PIN|RELEASES|REFS|PATCH|NOTE[|REVIEW[|EXTRA]], where REFS is
# a comma-separated list of the scanned tags (branch:NAME for a branch), and
# PATCH is coz:COMMIT:PATH (the patch file as cozystack had it at COMMIT),
# eks:COMMIT:PATH (the patch file as aws/eks-distro had it at COMMIT: its
# projects/ORG/REPO/1-NN/patches/*.patch, pinned at that release branch's
# GIT_TAG there),
# up:COMMIT (the upstream's own commit as git format-patch writes it: a fix
# carried until upstream released it, as a carry made with format-patch
# is), or file:PATH (relative to this repository); any of them followed by
# #FILE,FILE keeps only those files' diffs (a go.mod patch without its
# vendored copies). NOTE is free text (why the case is
# there: the cozystack commit that dropped the patch, or "carried").
# REVIEW, where the git CLI's evidence says neither way (it knows nothing
# of versions: a go.mod line that holds a module down, or raises one that
# upstream raised further), replaces the label at some refs:
# REF=STATUS:COMMIT:REASON entries separated by ";" (COMMIT a full id or
# -). The case file keeps the git CLI's evidence, and says in a comment
# which label was reviewed, what the git CLI's label was and why.
# EXTRA, comma-separated paths, are kept in the reduced upstream beside the
# patch's own files: a file upstream moved the patch's lines to, so that the
# reduced history holds the move as the real one does.
#
# For each case it writes NAME/patch.diff, NAME/history (the reduced upstream,
# see below) and NAME/case (the manifest: pin, refs, the git CLI evidence at
# each ref and the label derived from it).
#
# The reduced upstream: only the files the patch touches. Its commits are the
# upstream commits touching them between the merge base of the pin and the
# refs and the refs (git's default history simplification, as `git log --
# PATHS` shows them), each with its real author, committer, dates and message,
# its diff restricted to those files, and its real full-commit
# `git patch-id --stable`. A commit that also touched other files records its
# own id in the file CORPUS-OTHER-PATHS, so that its restricted diff cannot
# share a patch-id the real commit does not have. The commits the range
# starts from are snapshots (the files as they were there). The pin and the
# refs that touch none of the files are empty commits over their rewritten
# parents.
#
# The label at each ref comes from the git CLI alone (see label()).
set -euo pipefail

: "${MIRROR:?MIRROR must name the directory of upstream clones (OWNER+NAME/repo)}"
here=$(cd "$(dirname "$0")/.." && pwd)
COZY=${COZY:-$MIRROR/cozystack+cozystack/repo}
EKS=${EKS:-$MIRROR/aws+eks-distro/repo}
CASES=${1:-$here/internal/obsolete/testdata/corpus/CASES}
OUT=${2:-$(dirname "$CASES")}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
(cd "$here" && go build -o "$work/corpusbuild" ./hack/corpusbuild)

# patch_text SOURCE GIT: the patch file's bytes (GIT is the case's upstream,
# for up: sources). A source ending in #PATHS (comma-separated) keeps only
# the diffs of those files (a go.mod patch's vendored copies left out).
patch_text() {
	if [[ $1 == *'#'* ]]; then
		patch_text "${1%%#*}" "$2" | only_files "${1#*#}"
		return
	fi
	case $1 in
	up:*) git --git-dir="$2" format-patch -1 --stdout --no-signature "${1#up:}" ;;
	coz:*)
		local s=${1#coz:}
		git -C "$COZY" show "${s%%:*}:${s#*:}"
		;;
	eks:*)
		local s=${1#eks:}
		git -C "$EKS" show "${s%%:*}:${s#*:}"
		;;
	file:*) cat "$here/${1#file:}" ;;
	*)
		echo "unknown patch source $1" >&2
		return 2
		;;
	esac
}

# only_files PATHS: the patch on stdin with only the diffs of PATHS
# (comma-separated), its header kept.
only_files() {
	awk -v keep="$1" '
		BEGIN { n = split(keep, k, ","); for (i = 1; i <= n; i++) want["a/" k[i]] = 1 }
		/^diff --git / { on = ($3 in want) }
		!seen && !/^diff --git / { print; next }
		/^diff --git / { seen = 1 }
		on { print }
	'
}

# paths_of PATCH: the paths the patch touches, one a line (old and new names).
paths_of() {
	sed -n 's|^diff --git a/\(.*\) b/\(.*\)$|\1\n\2|p' "$1" | sort -u
}

# split_hunks PATCH DIR: one patch per hunk, DIR/1.diff, DIR/2.diff, ...,
# each with its file's header; prints their count.
split_hunks() {
	awk -v dir="$2" '
		/^diff --git / { hdr = $0 "\n"; inhdr = 1; next }
		inhdr && /^@@ / { inhdr = 0 }
		inhdr { hdr = hdr $0 "\n"; next }
		/^@@ / { n++; f = dir "/" n ".diff"; printf "%s", hdr > f }
		n && !inhdr { print >> (dir "/" n ".diff") }
		END { print n + 0 }
	' "$1"
}

# apply_check GIT COMMIT PATCH [-R]: git apply --cached --check on COMMIT's
# tree, in a temporary index.
apply_check() {
	local idx=$work/index
	rm -f "$idx"
	GIT_INDEX_FILE=$idx git --git-dir="$1" read-tree "$2"
	GIT_INDEX_FILE=$idx git --git-dir="$1" apply --cached --check ${4:-} "$3" 2>/dev/null
}

# norm: lines with runs of blanks collapsed and ends trimmed.
norm() { sed 's/[[:space:]]\+/ /g; s/^ //; s/ $//'; }

# changed_lines PATCH SIGN: the patch's added (+) or removed (-) lines,
# normalized, unique, significant (4 characters or more, with a letter or a
# digit).
changed_lines() {
	grep -v '^+++ \|^--- ' "$1" | sed -n "s/^[$2]//p" | norm | grep -E '^.{4,}$' | grep '[[:alnum:]]' | sort -u || true
}

# files_at GIT COMMIT PATHS...: the normalized lines of PATHS at COMMIT.
files_at() {
	local g=$1 c=$2 f
	shift 2
	for f in "$@"; do git --git-dir="$g" show "$c:$f" 2>/dev/null || true; done | norm | sort -u
}

# evidence GIT PIN REF PATCH PATCHID PATHS...: the git CLI's evidence at REF,
# one line of key=value words.
evidence() {
	local g=$1 pin=$2 ref=$3 p=$4 pid=$5
	shift 5
	local rev=fail fwd=fail idc=- hunks="" n i
	apply_check "$g" "$ref" "$p" -R && rev=ok
	apply_check "$g" "$ref" "$p" && fwd=ok
	# The commit of PIN..REF with the patch's patch-id (the real full
	# commit), the oldest; and whether a later commit reverts it: one whose
	# diff has the patch-id of its reversed diff, or whose message says
	# "This reverts commit <it>" as git revert writes (its context may have
	# moved since). A later commit with the patch-id lands it again.
	local rvc=- rpid="" cid
	while read -r c; do
		[[ -n $c ]] || continue
		cid=$(git --git-dir="$g" show --format= "$c" | git patch-id --stable | cut -d' ' -f1)
		if [[ $idc == - ]]; then
			if [[ $cid == "$pid" ]]; then
				idc=$c
				rpid=$(git --git-dir="$g" diff "$c" "$c^" | git patch-id --stable | cut -d' ' -f1)
			fi
		elif [[ $cid == "$rpid" ]] || git --git-dir="$g" log -1 --format=%B "$c" | grep -q "^This reverts commit $idc"; then
			rvc=$c
		elif [[ $cid == "$pid" ]]; then
			rvc=-
		fi
	done < <(git --git-dir="$g" rev-list --no-merges --reverse "$pin..$ref" -- "$@")
	# Hunk by hunk: r (reverse-applies), f (applies), x (neither).
	rm -rf "$work/h" && mkdir -p "$work/h"
	n=$(split_hunks "$p" "$work/h")
	for ((i = 1; i <= n; i++)); do
		if apply_check "$g" "$ref" "$work/h/$i.diff" -R; then
			hunks+=r
		elif apply_check "$g" "$ref" "$work/h/$i.diff"; then
			hunks+=f
		else
			hunks+=x
		fi
	done
	# Significant changed lines: added lines not in PIN's files that are in
	# REF's, removed lines in PIN's files that are gone from REF's; and the
	# commits of PIN..REF that git log -S names for them (oldest first).
	files_at "$g" "$pin" "$@" >"$work/at-pin"
	files_at "$g" "$ref" "$@" >"$work/at-ref"
	# A removed line is not gone because its file is: every file the patch
	# changes must still be there.
	local whole=yes f
	for f in "$@"; do
		if git --git-dir="$g" cat-file -e "$pin:$f" 2>/dev/null && ! git --git-dir="$g" cat-file -e "$ref:$f" 2>/dev/null; then
			whole=no
		fi
	done
	local total=0 there=0 line sign
	declare -A by=()
	local -a order=()
	for sign in + -; do
		while IFS= read -r line; do
			if [[ $sign == + ]]; then
				grep -qxF -e "$line" "$work/at-pin" && continue
				total=$((total + 1))
				grep -qxF -e "$line" "$work/at-ref" || continue
			else
				grep -qxF -e "$line" "$work/at-pin" || continue
				total=$((total + 1))
				[[ $whole == yes ]] || continue
				grep -qxF -e "$line" "$work/at-ref" && continue
			fi
			there=$((there + 1))
			local c
			local re
			re=$(sed 's/[][\\.*^$+?(){}|]/\\&/g; s/ /[[:space:]]+/g' <<<"$line")
			c=$(git --git-dir="$g" log --reverse --format=%H --pickaxe-regex -S"$re" "$pin..$ref" -- "$@" | head -1)
			[[ -n $c ]] || continue
			[[ -n ${by[$c]:-} ]] || order+=("$c")
			by[$c]=$((${by[$c]:-0} + 1))
		done < <(changed_lines "$p" "$sign")
	done
	local logs="" c top=- best=0
	for c in "${order[@]}"; do
		logs+="${logs:+,}$c:${by[$c]}"
		if ((by[$c] > best)); then
			best=${by[$c]}
			top=$c
		fi
	done
	# Did the change land verbatim: does the patch reverse-apply at the
	# commit that carried it (the patch-id commit, else the log -S one)?
	local landed=- at=$top
	[[ $idc == - ]] || at=$idc
	if [[ $at != - ]]; then
		landed=fail
		apply_check "$g" "$at" "$p" -R && landed=ok
	fi
	echo "reverse=$rev forward=$fwd patch-id=$idc reverted=$rvc landed=$landed hunks=$hunks lines=$there/$total log-S=${logs:--}"
}

# label EVIDENCE: the expected status and commit at a ref, from the git
# CLI's evidence alone, in this order:
#   the patch reverse-applies          present (the patch-id commit, else the
#                                      commit git log -S names for most lines)
#   it applies                         applies (a reverted change is needed again)
#   a commit has its patch-id, and no
#     later commit reverts it          present, that commit
#   every hunk reverse-applies alone,
#     or (not reverted) the patch
#     reverse-applies at the commit
#     that carried it                  present (landed, then edited)
#   git log -S names a commit, and some hunks reverse-apply or 2/3 of the
#     significant changed lines are upstream (added lines there, removed
#     lines gone):                     partial where a hunk still applies (a
#                                      region upstream left alone), else
#                                      superseded (upstream rewrote the rest)
#   some hunks reverse-apply, others
#     apply                            partial
#   else                               conflict
label() {
	local rev fwd idc landed hunks lines logs reverted=-
	for kv in $1; do
		case $kv in
		reverse=*) rev=${kv#*=} ;;
		forward=*) fwd=${kv#*=} ;;
		patch-id=*) idc=${kv#*=} ;;
		reverted=*) reverted=${kv#*=} ;;
		hunks=*) hunks=${kv#*=} ;;
		lines=*) lines=${kv#*=} ;;
		landed=*) landed=${kv#*=} ;;
		log-S=*) logs=${kv#*=} ;;
		esac
	done
	local top=- best=0 e
	if [[ $logs != - ]]; then
		for e in ${logs//,/ }; do
			if ((${e#*:} > best)); then
				best=${e#*:}
				top=${e%%:*}
			fi
		done
	fi
	# A reverted patch-id commit carries nothing: the rules below decide
	# as if it were not there.
	[[ $reverted == - ]] || idc=- landed=-
	local by=$top
	[[ $idc == - ]] || by=$idc
	local there=${lines%/*} total=${lines#*/}
	if [[ $rev == ok ]]; then
		echo "present $by"
	elif [[ $fwd == ok ]]; then
		echo "applies -"
	elif [[ $idc != - ]]; then
		echo "present $idc"
	elif [[ $hunks != *[fx]* || $landed == ok ]]; then
		echo "present $by"
	elif [[ $top != - && ($hunks == *r* || $((there * 3)) -ge $((total * 2))) ]]; then
		if [[ $hunks == *f* ]]; then
			echo "partial $by"
		else
			echo "superseded $by"
		fi
	elif [[ $hunks == *r* && $hunks == *f* ]]; then
		echo "partial $by"
	else
		echo "conflict -"
	fi
}

# resolve GIT REF: the commit of a tag or branch:NAME.
resolve() {
	case $2 in
	branch:*) git --git-dir="$1" rev-parse --verify -q "refs/heads/${2#branch:}^{commit}" ||
		git --git-dir="$1" rev-parse --verify -q "refs/remotes/origin/${2#branch:}^{commit}" ;;
	*) git --git-dir="$1" rev-parse --verify -q "$2^{commit}" ;;
	esac
}

# restricted_tree GIT COMMIT PATHS...: the id of COMMIT's tree restricted to
# PATHS (computed in the reduced repository $red).
restricted_tree() {
	local g=$1 c=$2 idx=$work/rindex
	shift 2
	rm -f "$idx"
	GIT_INDEX_FILE=$idx git --git-dir="$red" read-tree --empty
	git --git-dir="$g" ls-tree -r "$c" -- "$@" | GIT_INDEX_FILE=$idx git --git-dir="$red" update-index --index-info
	GIT_INDEX_FILE=$idx git --git-dir="$red" write-tree
}

# emit_data FILE: a length-prefixed data block.
emit_data() {
	echo "$1 $(wc -c <"$2")"
	cat "$2"
	echo
}

cut_case() {
	local name=$1 repo=$2 pin=$3 releases=$4 refs=$5 src=$6 note=$7 review=${8:-} extra=${9:-}
	local g=$MIRROR/$repo/repo dir=$OUT/$name
	[[ -d $g/.git ]] && g=$g/.git
	echo "cutting $name" >&2
	local pc
	pc=$(resolve "$g" "$pin") || {
		echo "$name: pin $pin not found in $g" >&2
		return 1
	}
	# A pin that is not a tag is recorded as its full commit id.
	git --git-dir="$g" rev-parse --verify -q "refs/tags/$pin" >/dev/null || pin=$pc
	rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
	patch_text "$src" "$g" >"$dir.tmp/patch.diff"
	local p=$dir.tmp/patch.diff pid
	pid=$(git patch-id --stable <"$p" | cut -d' ' -f1)
	local -a paths refnames refcommits rv=()
	mapfile -t paths < <({
		paths_of "$p"
		[[ -z $extra ]] || tr ',' '\n' <<<"$extra"
	} | sort -u)
	IFS=, read -r -a refnames <<<"$refs"
	local r
	for r in "${refnames[@]}"; do
		refcommits+=("$(resolve "$g" "$r")") || {
			echo "$name: ref $r not found" >&2
			return 1
		}
	done
	# In a shallow clone the pin and the refs may share no commit: the
	# shallow boundary is the end of history, as git takes it (then there is
	# no merge base, and the commits with no parents are snapshots).
	local e
	IFS=';' read -r -a rv <<<"$review"
	for e in "${rv[@]}"; do
		e=${e# }
		[[ ,$refs, == *",${e%%=*},"* ]] || {
			echo "$name: reviewed label for $e: not a scanned ref" >&2
			return 1
		}
	done
	local base
	base=$(git --git-dir="$g" merge-base --octopus "$pc" "${refcommits[@]}") || base=

	# The reduced commits: the simplified history of PATHS in base..{pin,refs}.
	red=$work/red.git
	rm -rf "$red" && git init -q --bare "$red"
	declare -A node=() parents=()
	local -a order=()
	local line c
	while read -r line; do
		set -- $line
		c=$1
		shift
		parents[$c]="$*"
		order+=("$c")
	done < <(git --git-dir="$g" rev-list --topo-order --reverse --parents "$pc" "${refcommits[@]}" ${base:+"^$base"} -- "${paths[@]}")
	declare -A listed=()
	for c in "${order[@]}"; do listed[$c]=1; done
	# A listed commit with no parents (a root, or a shallow clone's
	# boundary) is a snapshot.
	declare -A isroot=()
	for c in "${order[@]}"; do [[ -n ${parents[$c]} ]] || isroot[$c]=1; done
	# Boundaries: parents outside the list (base or its ancestors).
	local -a roots=()
	local q
	for c in "${order[@]}"; do
		for q in ${parents[$c]}; do
			if [[ -z ${listed[$q]:-} && -z ${isroot[$q]:-} ]]; then
				isroot[$q]=1
				roots+=("$q")
			fi
		done
	done
	# The merge base is the root of every ref that reaches no listed commit.
	if [[ -n $base && -z ${listed[$base]:-} && -z ${isroot[$base]:-} ]]; then
		isroot[$base]=1
		roots+=("$base")
	fi
	# Pin and refs that are not listed: empty commits over their rewritten
	# parents (the maximal listed commits they reach), else over base.
	local -a synth=()
	declare -A issynth=()
	for c in "$pc" "${refcommits[@]}"; do
		[[ -z ${listed[$c]:-} && -z ${issynth[$c]:-} && -z ${isroot[$c]:-} ]] || continue
		issynth[$c]=1
		synth+=("$c")
		local -a reach=()
		declare -A ispar=()
		while read -r line; do
			set -- $line
			reach+=("$1")
			shift
			for q in "$@"; do ispar[$q]=1; done
		done < <(git --git-dir="$g" rev-list --parents "$c" ${base:+"^$base"} -- "${paths[@]}")
		local ps=""
		for q in "${reach[@]}"; do [[ -n ${ispar[$q]:-} ]] || ps+="${ps:+ }$q"; done
		[[ -n $ps ]] || ps=$base
		parents[$c]=$ps
		unset ispar
	done
	# A commit or ref that contains the pin upstream contains it here too:
	# its parents that are ancestors of the pin (the same files as the pin,
	# since they are its nearest commits touching them) become the pin.
	if [[ -z ${listed[$pc]:-} ]]; then
		for c in "${order[@]}" "${synth[@]}"; do
			[[ $c != "$pc" ]] || continue
			git --git-dir="$g" merge-base --is-ancestor "$pc" "$c" || continue
			local np="" rewired=no
			for q in ${parents[$c]}; do
				if [[ $q != "$pc" ]] && git --git-dir="$g" merge-base --is-ancestor "$q" "$pc"; then
					q=$pc
				fi
				[[ " $np " == *" $q "* ]] || np+="${np:+ }$q"
			done
			parents[$c]=$np
		done
	fi
	# Every root is an ancestor of the pin upstream (it is reachable from the
	# merge base): make it one here too, or the range would list it.
	for q in "${roots[@]}"; do
		[[ $q != "$pc" && " ${parents[$pc]:-} " != *" $q "* ]] || continue
		parents[$pc]="${parents[$pc]:-}${parents[$pc]:+ }$q"
	done

	# Write the history file and build the reduced repository with the same
	# steps the test takes (apply each diff on its first parent's tree).
	# Number the nodes parents first.
	local -a all=() pending=("${roots[@]}" "${order[@]}" "${synth[@]}") rest
	declare -A emitted=()
	while ((${#pending[@]})); do
		rest=()
		local progressed=no ok
		for c in "${pending[@]}"; do
			ok=yes
			for q in ${parents[$c]:-}; do [[ -n ${emitted[$q]:-} ]] || ok=no; done
			if [[ $ok == yes ]]; then
				all+=("$c")
				emitted[$c]=1
				progressed=yes
			else
				rest+=("$c")
			fi
		done
		if [[ $progressed == no ]]; then
			echo "$name: the reduced history has a cycle" >&2
			return 1
		fi
		pending=("${rest[@]}")
	done
	unset emitted
	local hist=$dir.tmp/history n=0
	: >"$hist"
	for c in "${all[@]}"; do
		n=$((n + 1))
		node[$c]=$n
		local kind=commit ps="" first="" pnums=""
		ps=${parents[$c]:-}
		first=${ps%% *}
		for q in $ps; do pnums+="${pnums:+ }${node[$q]}"; done
		[[ -z ${isroot[$c]:-} ]] || kind=snapshot
		[[ -z ${issynth[$c]:-} ]] || kind=ref
		local d=$work/diff m=$work/msg
		if [[ $kind == snapshot ]]; then
			git --git-dir="$g" diff --binary --full-index "$(git hash-object -t tree /dev/null)" "$c" -- "${paths[@]}" >"$d"
		elif [[ $kind == ref ]]; then
			: >"$d"
		else
			git --git-dir="$g" diff --binary --full-index "$first" "$c" -- "${paths[@]}" >"$d"
		fi
		# A real commit with changes outside PATHS marks itself.
		local other=no realpid=-
		if [[ $kind == commit && $(git --git-dir="$g" rev-list --parents -1 "$c" | wc -w) -eq 2 ]]; then
			local np
			np=$(git --git-dir="$g" show --name-only --format= "$c" | grep -c -v -x -F -f <(printf '%s\n' "${paths[@]}") || true)
			[[ $np -eq 0 ]] || other=yes
			realpid=$(git --git-dir="$g" show --format= "$c" | git patch-id --stable | cut -d' ' -f1)
			realpid=${realpid:--}
		fi
		git --git-dir="$g" log -1 --format=%B "$c" >"$m"
		{
			echo "node $n $kind"
			echo "real $c"
			[[ -z $pnums ]] || echo "parents $pnums"
			git --git-dir="$g" log -1 --format='author %an <%ae> %at %ad%ncommitter %cn <%ce> %ct %cd' --date=format:%z "$c"
			echo "patch-id $realpid"
			echo "other-paths $other"
			emit_data message "$m"
			emit_data diff "$d"
		} >>"$hist"
	done
	# Build it, to record the reduced ids the test must reproduce.
	GO_CORPUS_HISTORY=$hist "$work/corpusbuild" "$red" >"$work/ids"
	local -A redid=()
	while read -r q c; do redid[$q]=$c; done <"$work/ids"
	# Check: each reduced tree, without the marker file, is the real tree
	# restricted to PATHS.
	for c in "${all[@]}"; do
		local want got
		want=$(restricted_tree "$g" "$c" "${paths[@]}")
		got=$(git --git-dir="$red" ls-tree "${redid[${node[$c]}]}" -- "${paths[@]}" >/dev/null &&
			GIT_INDEX_FILE=$work/cindex git --git-dir="$red" read-tree "${redid[${node[$c]}]}" &&
			GIT_INDEX_FILE=$work/cindex git --git-dir="$red" rm -q --cached --ignore-unmatch CORPUS-OTHER-PATHS >/dev/null &&
			GIT_INDEX_FILE=$work/cindex git --git-dir="$red" write-tree)
		if [[ $want != "$got" ]]; then
			echo "$name: reduced tree of $c ($got) is not its real tree on the patch's paths ($want)" >&2
			return 1
		fi
	done

	# The manifest.
	{
		echo "# $name: cut by hack/cut-corpus.sh from $repo; do not edit by hand"
		echo "upstream $repo"
		echo "source $src"
		echo "note $note"
		echo "pin $pin ${node[$pc]} $pc"
		echo "releases $releases"
		echo "patch-id $pid"
		local k=0
		for r in "${refnames[@]}"; do
			c=${refcommits[$k]}
			k=$((k + 1))
			local ev lb
			ev=$(evidence "$g" "$pc" "$c" "$p" "$pid" "${paths[@]}")
			lb=$(label "$ev")
			echo "ref $r ${node[$c]} $c"
			echo "git $r $ev"
			local rl=""
			for e in "${rv[@]}"; do
				e=${e# }
				[[ ${e%%=*} == "$r" ]] || continue
				rl=${e#*=}
			done
			if [[ -n $rl ]]; then
				local rs=${rl%%:*} rest=${rl#*:}
				local rc=${rest%%:*} why=${rest#*:}
				echo "# reviewed $r: the git CLI's label is $lb; $why"
				lb="$rs $rc"
			fi
			echo "expect $r $lb"
		done
		for q in "${!redid[@]}"; do echo "reduced $q ${redid[$q]}"; done | sort -n -k2
	} >"$dir.tmp/case"
	rm -rf "$dir" && mv "$dir.tmp" "$dir"
	unset node parents listed isroot issynth redid
}

while IFS='|' read -r name repo pin releases refs src note review extra; do
	[[ -n $name && $name != \#* ]] || continue
	[[ -z ${ONLY:-} || $ONLY == "$name" ]] || continue
	[[ -z ${KEEP:-} || ! -f $OUT/$name/case ]] || continue
	cut_case "$name" "$repo" "$pin" "$releases" "$refs" "$src" "$note" "$review" "$extra"
done <"$CASES"

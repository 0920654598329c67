#!/usr/bin/env bash
# Cuts the real eks-distro slices of internal/cmd/apply/testdata/gitam: a
# patch eks-distro applies with `git am` at its pin, cut to a few of its file
# diffs (its mail header and signature kept as they are), and the upstream
# files those diffs touch at the pin.
#
#   EKS=DIR PLUGINS=DIR hack/cut-gitam-slices.sh
#
# EKS and PLUGINS are git directories of aws/eks-distro and of
# containernetworking/plugins (bare or not). See the README it writes.
set -euo pipefail
: "${EKS:?git directory of aws/eks-distro}" "${PLUGINS:?git directory of containernetworking/plugins}"
out=internal/cmd/apply/testdata/gitam
eks=$(git --git-dir="$EKS" rev-parse HEAD)

# cut NAME BRANCH PATCH PATH...: the file diffs of PATHs of eks-distro's
# projects/containernetworking/plugins/BRANCH/patches/PATCH.
cut() {
	local name=$1 branch=$2 patch=$3
	shift 3
	local src=projects/containernetworking/plugins/$branch
	local tag d
	tag=$(git --git-dir="$EKS" show "$eks:$src/GIT_TAG" | tr -d '[:space:]')
	d=$out/$name
	rm -rf "$d"
	mkdir -p "$d/patches" "$d/upstream"
	printf '%s\n' "$tag" >"$d/GIT_TAG"
	# header up to its "---" line, the diffs of PATHs, and the signature
	# (the last line that is "-- " or "--", to the end), as they are.
	git --git-dir="$EKS" show "$eks:$src/patches/$patch" | awk -v keep=" $* " '
		{ line[NR] = $0 }
		/^diff --git / && !first { first = NR }
		/^-- ?$/ { sig = NR }
		END {
			for (i = 1; i < first; i++) { print line[i]; if (line[i] == "---") break }
			print ""
			for (i = first; i < sig; i++) {
				if (line[i] ~ /^diff --git /) { split(line[i], f, " "); on = index(keep, " " substr(f[3], 3) " ") > 0 }
				if (on) print line[i]
			}
			for (i = sig; i <= NR; i++) print line[i]
		}' >"$d/patches/$patch"
	for p in "$@"; do
		if git --git-dir="$PLUGINS" cat-file -e "$tag:$p" 2>/dev/null; then
			mkdir -p "$d/upstream/$(dirname "$p")"
			git --git-dir="$PLUGINS" show "$tag:$p" >"$d/upstream/$p"
		fi
	done
	printf '%s|%s|%s|%s\n' "$name" "$src/patches/$patch" "$tag" "$*" >>"$out/SOURCES"
}

rm -f "$out/SOURCES"
mkdir -p "$out"
printf '# NAME|EKS-DISTRO PATCH (at aws/eks-distro %s)|PIN|PATHS\n' "$eks" >"$out/SOURCES"
# A signature whose "-- " lost its space: the last file diff ends in "--".
cut plugins-1-22-signature 1-22 0001-Bump-golang-x-net-to-0.7.0.patch go.mod vendor/modules.txt
# Whitespace errors git am warns about (trailing whitespace twice, a new
# blank line at the end of a file).
cut plugins-1-27-whitespace 1-27 0001-Bump-x-net-to-patch-version-to-fix-CVE-2023-44487-and-CVE-2023-39325.patch \
	go.mod vendor/github.com/Microsoft/hcsshim/.golangci.yml vendor/github.com/Microsoft/hcsshim/SECURITY.md vendor/github.com/golang/protobuf/LICENSE

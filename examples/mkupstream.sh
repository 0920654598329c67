#!/usr/bin/env bash
# mkupstream.sh SRC DEST: build the example's upstream git repository at DEST
# from SRC/base (the first release, tagged from its Tag: line in SRC/base.tag)
# and SRC/history/*.diff, applied in order, one commit each. A diff's header
# gives the commit's Subject: and, optionally, the Tag: to put on it.
# Identity and dates are fixed, so commit ids are the same on every machine.
set -euo pipefail
src=$1 dest=$2
rm -rf "$dest"
mkdir -p "$dest"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME="Greeter Upstream" GIT_AUTHOR_EMAIL="upstream@example.com"
export GIT_COMMITTER_NAME="Greeter Upstream" GIT_COMMITTER_EMAIL="upstream@example.com"
t=1700000000
commit() {
  t=$((t + 86400))
  GIT_AUTHOR_DATE="@$t +0000" GIT_COMMITTER_DATE="@$t +0000" git -C "$dest" commit -q -m "$1"
}
tag() {
  GIT_COMMITTER_DATE="@$t +0000" git -C "$dest" tag -a -m "$1" "$1"
}
git -C "$dest" init -q -b main
git -C "$dest" config core.autocrlf false
cp -R "$src/base/." "$dest/"
git -C "$dest" add -A
commit "greeter: first release"
tag "$(cat "$src/base.tag")"
for d in "$src"/history/*.diff; do
  git -C "$dest" apply --index "$(realpath "$d")"
  commit "$(sed -n 's/^Subject: //p' "$d" | head -1)"
  tagname=$(sed -n '/^diff --git/q; s/^Tag: //p' "$d" | head -1)
  if [ -n "$tagname" ]; then tag "$tagname"; fi
done

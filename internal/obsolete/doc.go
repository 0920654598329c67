// Package obsolete finds, for every patch of a series, which scanned upstream
// refs still need it, and the first upstream release that carries it.
//
// Check scans the refs newer than the pin (see selectRefs). At each ref it
// tests the series the way git would apply it: on the ref's tree, with the
// earlier patches that are still needed applied first, whitespace checks off.
// Each patch gets one status, decided in this order:
//
//  1. present: it reverse-applies cleanly;
//  2. applies: it applies (and is applied for the next patches);
//  3. hunk by hunk, each hunk is there (it reverse-applies, or its lines are
//     there in its own context, see carried.go), applies, or conflicts:
//     every hunk there is present (with a commit that has the patch's
//     patch-id (git patch-id --stable), or when every hunk reverse-applies),
//     else present or superseded as the patch did or did not reverse-apply
//     at the commit after which every hunk is there; some hunks there is
//     partial (the applying ones are applied for the next patches);
//  4. superseded: no hunk is there, but at least two thirds
//     (SupersededShare) of its significant changed lines are upstream
//     (added lines there, removed lines gone; see LineMatch);
//  5. conflict, with the first failing hunk.
//
// A verdict that rests on lines holds only when the range has the commit
// that landed them, reachable from the ref; a change upstream reverted is
// no longer there by its lines, so it is needed again.
//
// The tree decides before the patch-id, so that a change reverted after a
// release applies again even though the commit that brought it is still in
// the history.
//
// For present and superseded, the result names the upstream commit that
// carries the change: the patch-id commit, else the commit of the range,
// oldest first among those touching the patch's files, after which the
// change is there for good.
//
// The patch-ids of the upstream commits are computed once per run, from one
// `git log -p` of the range limited to the series' paths (a commit with the
// patch's patch-id touches exactly its files), run with the git CLI on the
// bare cache; the git CLI stops at shallow boundaries by itself.
package obsolete

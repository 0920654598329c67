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
//  3. present: an upstream commit reachable from the ref and not from the pin
//     has its patch-id (git patch-id --stable);
//  4. partial: tested hunk by hunk, some reverse-apply and the others apply
//     (those are applied for the next patches); when every hunk reverse-applies
//     on its own, present;
//  5. superseded: at least two thirds (SupersededShare) of its significant
//     added lines are in the ref's version of its files; significant lines
//     are non-blank and not already in the file at the pin, compared with
//     surrounding whitespace trimmed;
//  6. conflict, with the first failing hunk.
//
// The tree decides before the patch-id, so that a change reverted after a
// release applies again even though the commit that brought it is still in
// the history.
//
// For present and superseded, the result names the upstream commit that
// carries the change: the patch-id commit, else the commit of the range,
// oldest first among those touching the patch's files, after which the patch
// reverse-applies (or its added lines are there) for good.
//
// The patch-ids of the upstream commits are computed once per run, from one
// `git log -p` of the range limited to the series' paths (a commit with the
// patch's patch-id touches exactly its files), run with the git CLI on the
// bare cache; the git CLI stops at shallow boundaries by itself.
package obsolete

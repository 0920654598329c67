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
//     there in its own context, see carried.go), applies, or conflicts; the
//     applying hunks of a patch with some hunk there are applied for the
//     next patches. Then what upstream carries decides (decide, landing.go):
//     a commit of the ref with the patch's patch-id (git patch-id --stable)
//     makes it present until a hunk is reverted; else each hunk gets the
//     commit that landed it, and the patch is present or superseded when
//     every hunk is carried, superseded when the other hunks sit in regions
//     the landing commits rewrote, partial when some are carried;
//  4. superseded: no hunk is carried, but at least two thirds
//     (SupersededShare) of its significant changed lines are upstream
//     (added lines there, removed lines gone; see LineMatch), with the
//     commit after which they are;
//  5. conflict, with the first failing hunk; when upstream deleted every
//     file the patch modifies (not renamed), the target is removed
//     (removed.go): still conflict, with the files and the commit.
//
// Every status where any of the change is upstream names the commits that
// carry it, per hunk (Result.Commits, Hunk.Commit).
//
// The patch-ids of the upstream commits are computed once per run, from one
// `git log -p` of the range limited to the series' paths (a commit with the
// patch's patch-id touches exactly its files), run with the git CLI on the
// bare cache; the git CLI stops at shallow boundaries by itself.
package obsolete

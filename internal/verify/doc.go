// Package verify checks an image's patch series the way a pull request
// review needs: it applies, has no whitespace errors, has headers that say
// where each patch comes from, matches the upstream commits it names, has
// true removal notes, and owns its tests.
package verify

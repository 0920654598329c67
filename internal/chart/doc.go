// Package chart is the second kind of unit: a vendored directory (a Helm
// chart, a subdirectory of a tagged upstream, a release asset) that a
// package Makefile fetches and patches with GNU patch or git apply, and
// that the repository commits. It reads the units' specs, fetches their
// upstreams, applies their series with the tool's own semantics, and
// compares the result with the vendored directory.
package chart

// Package gate runs an image's regression test (`go test -json` on the
// patched tree with the injected test files) and checks that each patch owns
// the subtests its Test: header names.
package gate

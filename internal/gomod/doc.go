// Package gomod recognises dependency-bump patches (hunks that only change
// version lines of go.mod, go.sum and vendor/modules.txt), splits a mixed
// patch into its bump and code parts, judges the raised requirements against
// another go.mod in Go's module version order, and re-expresses a bump on a
// new tree with the go command.
package gomod

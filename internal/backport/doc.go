// Package backport turns upstream commits into patch files and grades a patch
// against the upstream commit it names: identical, equivalent or differs.
package backport

// Package txn writes a set of repository files as one transaction: under the
// repository lock, refusing any file that changed since the command read it,
// and through a journal that the next run rolls forward (or back) when a
// run is killed part-way.
package txn

package cmdutil

import (
	"context"
	"fmt"
	"strings"

	"github.com/patchkit/patchkit/internal/txn"
)

// LockNotice is the txn.Options.Waiting of a command: one line on ErrOut
// saying that another patchkit holds the repository lock.
func LockNotice(io *IOStreams) func() {
	return func() {
		fmt.Fprintln(io.ErrOut, "patchkit: waiting for the repository lock (another patchkit command is writing)")
	}
}

// recoverJournal completes (or undoes) the write a killed patchkit left in
// root's journal before a command reads the repository, and says so on
// ErrOut.
func recoverJournal(ctx context.Context, io *IOStreams, root string) error {
	rec, err := txn.Recover(ctx, root)
	if err != nil || rec == nil {
		return err
	}
	verb := "undid an interrupted write (it had not reached its commit point; nothing of it was kept)"
	if rec.Forward {
		verb = "completed an interrupted write"
	}
	fmt.Fprintf(io.ErrOut, "patchkit: %s of %s\n", verb, strings.Join(rec.Files, ", "))
	return nil
}

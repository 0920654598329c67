package cmdutil

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/patchkit/patchkit/internal/txn"
)

// LockNotice is the txn.Options.Waiting of a command: one line on ErrOut
// saying which process holds the repository lock, and for how long the
// command waits.
func LockNotice(io *IOStreams, timeout time.Duration) func(holder string) {
	if timeout <= 0 {
		timeout = txn.DefaultLockTimeout
	}
	return func(holder string) {
		if holder == "" {
			holder = "another patchkit command, writing"
		}
		fmt.Fprintf(io.ErrOut, "patchkit: waiting for the repository lock, held by %s (at most %s, --lock-timeout)\n", holder, timeout)
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

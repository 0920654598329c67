package diag

import (
	"fmt"
	"sync"
)

// Note is input patchkit accepts but the user should change: a deprecated
// spelling of a spec key. It names the file and line, as an InputError does,
// and never changes the exit code.
type Note struct {
	File string // the file, as the user names it
	Line int    // 1-based line, or 0
	Msg  string
}

func (n Note) String() string {
	if n.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", n.File, n.Line, n.Msg)
	}
	return n.File + ": " + n.Msg
}

// notes is the process's note sink: libraries never print, so the command
// tree installs where notes go (SetNotes), and a library reports each note
// with Notify. A note is passed on once per sink, however often its file
// is read in one run.
var notes struct {
	mu   sync.Mutex
	fn   func(Note)
	seen map[Note]bool
}

// SetNotes installs fn as the receiver of every Note from now on, and
// forgets the notes already passed on; nil drops them (the default, so
// library tests print nothing). It returns the previous receiver.
func SetNotes(fn func(Note)) (prev func(Note)) {
	notes.mu.Lock()
	defer notes.mu.Unlock()
	prev, notes.fn, notes.seen = notes.fn, fn, map[Note]bool{}
	return prev
}

// Notify passes n to the installed receiver, unless it passed the same
// note already.
func Notify(n Note) {
	notes.mu.Lock()
	defer notes.mu.Unlock()
	if notes.fn == nil || notes.seen[n] {
		return
	}
	notes.seen[n] = true
	notes.fn(n)
}

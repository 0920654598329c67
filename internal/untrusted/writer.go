package untrusted

import (
	"io"
	"sync"
)

// Writer is an output stream every byte passes through Redact on, and,
// unless commands are allowed, Neutralise. It is the last guard: a command
// that forgets to pass a message through Text still cannot print a secret,
// nor a workflow command on a stream that carries none of patchkit's own.
// Each Write is redacted on its own, so a writer must not split a secret
// across writes (the renderers write whole results).
type Writer struct {
	mu        sync.Mutex
	w         io.Writer
	commands  bool
	lineStart bool
	written   int64
}

// NewWriter returns a Writer over w that neutralises workflow commands.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, lineStart: true}
}

// AllowCommands lets lines that start with "::" through: the github output
// format prints patchkit's own annotations, whose fields the renderer
// escaped. Secrets are redacted all the same.
func (w *Writer) AllowCommands(allow bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.commands = allow
}

// Written returns how many bytes were written through w.
func (w *Writer) Written() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.written
}

// Write implements io.Writer. It reports len(p) on success, whatever the
// length of the redacted text.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := Redact(string(p))
	if w.commands {
		w.lineStart = atLineStart(s, w.lineStart)
	} else {
		s, w.lineStart = neutralise(s, w.lineStart)
	}
	n, err := io.WriteString(w.w, s)
	w.written += int64(n)
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

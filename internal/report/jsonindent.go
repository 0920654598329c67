package report

import (
	"bytes"
	"io"
)

// indentWriter indents the compact JSON that encoding/json's Encoder writes
// to it, byte for byte as json.Indent would (no prefix, the indent given),
// and writes each piece it is given to w in one write, as Export promises
// (untrusted's filter on the output redacts a secret only within one
// write). Encoder.SetIndent instead builds the indented copy in a buffer
// of its own grown by doubling: for an obsolete-check report of a megabyte
// that was a third of a warm run's time, most of it the kernel handing out
// and zeroing fresh pages (docs/benchmarks.md); here the copy is made once,
// sized from the input. The Encoder marshals the whole value before its one
// Write, so a value that fails to encode writes nothing.
//
// The input has no white space outside strings but the Encoder's final
// newline, which is written as it is, as json.Indent does. The state
// carries from one Write to the next, so any cut of the input gives the
// same bytes.
type indentWriter struct {
	w          io.Writer
	indent     string
	pad        []byte // "\n" and depth indents: newline's bytes
	depth      int
	inString   bool // inside a string, after its opening quote
	escaped    bool // inside a string, after a backslash
	needIndent bool // after { or [: a newline comes unless it closes at once
}

func newIndentWriter(w io.Writer, indent string) *indentWriter {
	return &indentWriter{w: w, indent: indent, pad: []byte{'\n'}}
}

// Write indents p, which continues what the earlier writes gave, and
// writes it to w in one write.
func (iw *indentWriter) Write(p []byte) (int, error) {
	// Indented JSON of encoding/json's reports is under twice the compact
	// size; deeper nesting only grows the buffer once more.
	out := make([]byte, 0, 2*len(p)+64)
	for i := 0; i < len(p); i++ {
		c := p[i]
		if iw.inString {
			if iw.escaped {
				iw.escaped = false
				out = append(out, c)
				continue
			}
			// Copy the run up to the next quote or backslash whole.
			j := bytes.IndexAny(p[i:], `"\`)
			if j < 0 {
				out = append(out, p[i:]...)
				break
			}
			out = append(out, p[i:i+j+1]...)
			i += j
			if p[i] == '\\' {
				iw.escaped = true
			} else {
				iw.inString = false
			}
			continue
		}
		if iw.needIndent && c != '}' && c != ']' {
			iw.needIndent = false
			iw.depth++
			out = iw.newline(out)
		}
		switch c {
		case '"':
			iw.inString = true
			out = append(out, c)
		case '{', '[':
			iw.needIndent = true // an empty object or array stays {} or []
			out = append(out, c)
		case ',':
			out = append(out, c)
			out = iw.newline(out)
		case ':':
			out = append(out, ':', ' ')
		case '}', ']':
			if iw.needIndent {
				iw.needIndent = false
			} else {
				iw.depth--
				out = iw.newline(out)
			}
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	if _, err := iw.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// newline appends a newline and the indents of the current depth.
func (iw *indentWriter) newline(out []byte) []byte {
	n := 1 + iw.depth*len(iw.indent)
	for len(iw.pad) < n {
		iw.pad = append(iw.pad, iw.indent...)
	}
	return append(out, iw.pad[:n]...)
}

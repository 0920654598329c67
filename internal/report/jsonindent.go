package report

import (
	"bufio"
	"bytes"
	"io"
)

// indentWriter indents the compact JSON that encoding/json's Encoder writes
// to it, byte for byte as json.Indent would (no prefix, the indent given),
// and streams it to w. Encoder.SetIndent instead builds the indented copy
// in a buffer of its own, grown by doubling: for an obsolete-check report of
// a megabyte that was a third of a warm run's time, most of it the kernel
// handing out and zeroing fresh pages (docs/benchmarks.md). The Encoder
// marshals the whole value before its one Write, so a value that fails to
// encode writes nothing.
//
// The input has no white space outside strings but the Encoder's final
// newline, which is written as it is, as json.Indent does.
type indentWriter struct {
	w          *bufio.Writer
	indent     string
	depth      int
	inString   bool // inside a string, after its opening quote
	escaped    bool // inside a string, after a backslash
	needIndent bool // after { or [: a newline comes unless it closes at once
}

func newIndentWriter(w io.Writer, indent string) *indentWriter {
	return &indentWriter{w: bufio.NewWriterSize(w, 64<<10), indent: indent}
}

// Write indents p, which continues what the earlier writes gave. Errors of
// the underlying writer are returned by Flush.
func (iw *indentWriter) Write(p []byte) (int, error) {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if iw.inString {
			if iw.escaped {
				iw.escaped = false
				iw.w.WriteByte(c)
				continue
			}
			// Copy the run up to the next quote or backslash whole.
			j := bytes.IndexAny(p[i:], `"\`)
			if j < 0 {
				iw.w.Write(p[i:])
				break
			}
			iw.w.Write(p[i : i+j+1])
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
			iw.newline()
		}
		switch c {
		case '"':
			iw.inString = true
			iw.w.WriteByte(c)
		case '{', '[':
			iw.needIndent = true // an empty object or array stays {} or []
			iw.w.WriteByte(c)
		case ',':
			iw.w.WriteByte(c)
			iw.newline()
		case ':':
			iw.w.WriteString(": ")
		case '}', ']':
			if iw.needIndent {
				iw.needIndent = false
			} else {
				iw.depth--
				iw.newline()
			}
			iw.w.WriteByte(c)
		default:
			iw.w.WriteByte(c)
		}
	}
	return len(p), nil
}

func (iw *indentWriter) newline() {
	iw.w.WriteByte('\n')
	for range iw.depth {
		iw.w.WriteString(iw.indent)
	}
}

// Flush writes what is buffered and returns the first error of the
// underlying writer.
func (iw *indentWriter) Flush() error { return iw.w.Flush() }

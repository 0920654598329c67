package series

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"hash"
	"strings"
)

// ErrNoPatchID is returned by PatchID when the input holds no patch that
// `git patch-id` would print an id for: no line starting with "diff " (a
// traditional unified diff without `diff --git` lines, say).
var ErrNoPatchID = errors.New("no patch-id: no \"diff \" line in the input")

// PatchID returns the stable patch-id of diff: the first field of the first
// line that `git patch-id --stable` (git 2.39) prints for the same bytes.
//
// It is a port of get_one_patchid in git's builtin/patch-id.c: whitespace is
// removed from every hashed line, "index" lines are not hashed (their object
// ids stand in for the data of binary diffs), "\ No newline" lines are
// skipped, "@@" lines are not hashed but their line counts say where each
// hunk ends, and the hash of each file's diff is summed byte-wise, with carry,
// into the result, so that the order of files does not matter. Text before
// the first "diff " line (a commit message) is ignored. When diff holds more
// than one patch (a "From <id>" or "commit <id>" line starts the next), the
// id of the first one is returned.
func PatchID(diff []byte) (string, error) {
	r := patchIDReader{data: diff}
	for !r.eof() {
		sum, n := r.one(true)
		if n > 0 {
			return hex.EncodeToString(sum[:]), nil
		}
	}
	return "", ErrNoPatchID
}

// patchIDReader reads lines the way strbuf_getwholeline does: each with its
// newline, the last one possibly without.
type patchIDReader struct {
	data []byte
	off  int
}

func (r *patchIDReader) eof() bool { return r.off >= len(r.data) }

func (r *patchIDReader) next() ([]byte, bool) {
	if r.eof() {
		return nil, false
	}
	rest := r.data[r.off:]
	n := bytes.IndexByte(rest, '\n') + 1
	if n == 0 {
		n = len(rest)
	}
	r.off += n
	return rest[:n], true
}

// one is get_one_patchid: it hashes one patch and returns the id and the
// number of bytes hashed from lines (0 means git prints nothing for it).
func (r *patchIDReader) one(stable bool) (result [sha1.Size]byte, patchlen int) {
	before, after := -1, -1
	binary := false
	// git leaves these uninitialised until an "index" line sets them; an
	// empty string is the defined stand-in.
	var preOID, postOID string
	h := sha1.New()
	var stripped []byte // reused for every line

	for {
		raw, ok := r.next()
		if !ok {
			break
		}
		// git works on C strings: a NUL ends the line for every test.
		line := raw
		if i := bytes.IndexByte(line, 0); i >= 0 {
			line = line[:i]
		}
		s := view(line) // line is not changed while s is in use

		// Possibly skip over the prefix added by "log" or "format-patch".
		p := s
		if rest, ok := strings.CutPrefix(s, "commit "); ok {
			p = rest
		} else if rest, ok := strings.CutPrefix(s, "From "); ok {
			p = rest
		} else if strings.HasPrefix(s, "\\ ") && 12 < len(s) {
			continue
		}

		if isOIDHex(p) {
			// The start of the next patch.
			break
		}

		// Ignore commit comments.
		if patchlen == 0 && !strings.HasPrefix(s, "diff ") {
			continue
		}

		// Parsing the diff header?
		if before == -1 {
			if strings.HasPrefix(s, "GIT binary patch") || strings.HasPrefix(s, "Binary files") {
				binary = true
				before = 0
				h.Write([]byte(preOID))
				h.Write([]byte(postOID))
				if stable {
					flushOneHunk(&result, h)
				}
				continue
			} else if strings.HasPrefix(s, "index ") {
				preOID, postOID = indexOIDs(s, preOID, postOID)
				continue
			} else if strings.HasPrefix(s, "--- ") {
				before, after = 1, 1
			} else if len(s) == 0 || !isGitAlpha(s[0]) {
				break
			}
		}

		if binary {
			if strings.HasPrefix(s, "diff ") {
				binary = false
				before = -1
			}
			continue
		}

		// Looking for a valid hunk header?
		if before == 0 && after == 0 {
			if strings.HasPrefix(s, "@@ -") {
				// Parse the next hunk, but ignore line numbers.
				scanHunkHeader(s, &before, &after)
				continue
			}
			// Split at the end of the patch.
			if !strings.HasPrefix(s, "diff ") {
				break
			}
			// Else we're parsing another header.
			if stable {
				flushOneHunk(&result, h)
			}
			before, after = -1, -1
		}

		// If we get here, we're inside a hunk.
		if len(s) > 0 && (s[0] == '-' || s[0] == ' ') {
			before--
		}
		if len(s) > 0 && (s[0] == '+' || s[0] == ' ') {
			after--
		}

		// Add the line, without whitespace, to the hash.
		stripped = appendNoSpace(stripped[:0], line)
		patchlen += len(stripped)
		h.Write(stripped)
	}

	flushOneHunk(&result, h)
	return result, patchlen
}

// indexOIDs mirrors git's parsing of an "index <a>..<b>[ <mode>]" line: the
// two object ids, each cut to 64 characters (GIT_MAX_HEXSZ). When the line has
// no "..", the previous values stay.
func indexOIDs(s, pre, post string) (string, string) {
	oid1 := strings.Index(s, "..")
	if oid1 < 0 {
		return pre, post
	}
	oid2 := -1
	if i := strings.IndexByte(s[oid1:], ' '); i >= 0 {
		oid2 = oid1 + i
	}
	if oid2 < 0 {
		// git cuts the last character, which is the newline when there is one.
		oid2 = len(s) - 1
	}
	b := []byte(s)
	b[oid1] = 0
	b[oid2] = 0
	pre = cString(b[len("index "):], 64)
	if oid1+2 < len(b) {
		post = cString(b[oid1+2:], 64)
	} else {
		post = ""
	}
	return pre, post
}

// cString is strlcpy into a buffer of max+1 bytes: b up to its first NUL, at
// most max bytes.
func cString(b []byte, max int) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if len(b) > max {
		b = b[:max]
	}
	return string(b)
}

// flushOneHunk adds the hash of what ctx holds to result, byte by byte with
// carry (git's 20-byte sum), and resets ctx.
func flushOneHunk(result *[sha1.Size]byte, ctx hash.Hash) {
	sum := ctx.Sum(nil)
	ctx.Reset()
	var carry uint16
	for i := range result {
		carry += uint16(result[i]) + uint16(sum[i])
		result[i] = byte(carry)
		carry >>= 8
	}
}

// scanHunkHeader is git's scan_hunk_header: it reads the line counts of an
// "@@ -a,b +c,d @@" line into before and after (1 when a count is absent),
// stopping where the line stops making sense, as git does.
func scanHunkHeader(s string, before, after *int) {
	q := s[4:]
	n := digitSpan(q)
	if n < len(q) && q[n] == ',' {
		q = q[n+1:]
		*before = cAtoi(q)
		n = digitSpan(q)
	} else {
		*before = 1
	}
	if n == 0 || n+1 >= len(q) || q[n] != ' ' || q[n+1] != '+' {
		return
	}
	r := q[n+2:]
	n = digitSpan(r)
	if n < len(r) && r[n] == ',' {
		r = r[n+1:]
		*after = cAtoi(r)
	} else {
		*after = 1
	}
}

func digitSpan(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// cAtoi is glibc's atoi, (int)strtol(s, NULL, 10): leading C-locale space,
// an optional sign, digits; a value out of range of long saturates, and the
// conversion to a 32-bit int keeps the low 32 bits.
func cAtoi(s string) int {
	i := 0
	for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	const maxLong = 1<<63 - 1
	var v uint64
	overflow := false
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		d := uint64(s[i] - '0')
		if v > (maxLong+1-d)/10 {
			overflow = true
			continue
		}
		v = v*10 + d
	}
	var l int64
	switch {
	case overflow && neg:
		l = -maxLong - 1
	case overflow:
		l = maxLong
	case neg:
		if v > maxLong {
			l = -maxLong - 1
		} else {
			l = -int64(v)
		}
	default:
		if v > maxLong {
			l = maxLong
		} else {
			l = int64(v)
		}
	}
	return int(int32(l))
}

// appendNoSpace appends b to out without the bytes git's isspace accepts:
// space, \t, \n and \r (not \v or \f).
func appendNoSpace(out, b []byte) []byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
		default:
			out = append(out, c)
		}
	}
	return out
}

// isGitAlpha is git's isalpha: ASCII letters only.
func isGitAlpha(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// isOIDHex is git's get_oid_hex for SHA-1 succeeding: s starts with 40 hex
// digits (either case); what follows does not matter.
func isOIDHex(s string) bool {
	if len(s) < 2*sha1.Size {
		return false
	}
	for i := 0; i < 2*sha1.Size; i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

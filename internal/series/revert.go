package series

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// RevertPatchID returns the stable patch-id of diff reversed: the id `git
// patch-id --stable` prints for `git diff C C^` when diff is `git show C`'s
// (git revert's change, made where the context is still the same). A
// commit whose patch-id is this one undoes diff.
//
// diff is read as git prints it (`diff --git` headers, each file's header
// lines, unified hunks); the reversal swaps each file's sides (names,
// modes, object ids, creation and deletion, rename and copy ends), each
// hunk's ranges, and its added and removed lines, which it prints in git's
// order (a run of changed lines: the removed ones first). git's diff of the
// reversed files may pair lines differently where the change is ambiguous;
// then the ids differ, and the revert is not found by its id.
//
// A copy (git's -C) cannot be reversed from its diff: its reverse deletes
// the whole copied file. RevertPatchID returns ErrNotReversible for it.
func RevertPatchID(diff []byte) (string, error) {
	if bytes.Contains(diff, []byte("\ncopy from ")) {
		return "", ErrNotReversible
	}
	return PatchID(reverseDiff(diff))
}

// ErrNotReversible is RevertPatchID's answer for a diff whose reverse its
// text does not hold (a copy).
var ErrNotReversible = errors.New("the diff holds a copy, whose reverse it does not hold")

// reverseDiff is diff with every file's sides swapped (see RevertPatchID).
// Text before the first "diff " line is dropped.
func reverseDiff(diff []byte) []byte {
	var out bytes.Buffer
	var minus, plus [][]byte // the pending run of changed lines, reversed
	flush := func() {
		for _, l := range minus {
			out.Write(l)
		}
		for _, l := range plus {
			out.Write(l)
		}
		minus, plus = minus[:0], plus[:0]
	}
	inHunk, started := false, false
	oldLeft, newLeft := 0, 0
	r := patchIDReader{data: diff}
	for {
		raw, ok := r.next()
		if !ok {
			break
		}
		s := string(raw)
		if inHunk && (oldLeft > 0 || newLeft > 0 || strings.HasPrefix(s, "\\")) {
			switch {
			case strings.HasPrefix(s, "-"):
				plus = append(plus, append([]byte{'+'}, raw[1:]...))
				oldLeft--
			case strings.HasPrefix(s, "+"):
				minus = append(minus, append([]byte{'-'}, raw[1:]...))
				newLeft--
			case strings.HasPrefix(s, "\\"):
				// "\ No newline at end of file" follows the line it
				// speaks of; patch-id skips it.
			default:
				flush()
				out.Write(raw)
				oldLeft--
				newLeft--
			}
			continue
		}
		flush()
		inHunk = false
		switch {
		case strings.HasPrefix(s, "diff --git "):
			started = true
			out.WriteString(reverseGitHeader(s))
		case !started:
		case strings.HasPrefix(s, "@@ -"):
			h, o, n, ok := reverseHunkHeader(s)
			if !ok {
				out.Write(raw)
				continue
			}
			out.WriteString(h)
			inHunk, oldLeft, newLeft = true, o, n
		case strings.HasPrefix(s, "--- "):
			// The next line is "+++ ": the two swap, their signs kept.
			next, _ := r.next()
			out.WriteString("--- " + swapSide(strings.TrimPrefix(string(next), "+++ "), "b/", "a/"))
			out.WriteString("+++ " + swapSide(strings.TrimPrefix(s, "--- "), "a/", "b/"))
		case strings.HasPrefix(s, "index "):
			out.WriteString(reverseIndex(s))
		default:
			// "old mode", "rename from" and "copy from" come before
			// their other end: the two swap their values.
			first, second, paired := headerPair(s)
			if !paired {
				out.WriteString(reverseHeaderLine(s))
				continue
			}
			save := r.off
			next, _ := r.next()
			if rest, ok := strings.CutPrefix(string(next), second); ok {
				out.WriteString(first + rest + second + strings.TrimPrefix(s, first))
			} else {
				r.off = save
				out.WriteString(reverseHeaderLine(s))
			}
		}
	}
	flush()
	return out.Bytes()
}

// swapSide is a ---/+++ name moved to the other side: its a/ or b/ prefix
// becomes the other's; /dev/null stays.
func swapSide(name, from, to string) string {
	if rest, ok := strings.CutPrefix(name, from); ok {
		return to + rest
	}
	if rest, ok := strings.CutPrefix(name, `"`+from); ok {
		return `"` + to + rest
	}
	return name
}

// reverseGitHeader swaps the names of a "diff --git a/X b/Y" line. Names
// with spaces are split where " b/" follows a name that is the other's
// (git's own heuristic), else at the last " b/".
func reverseGitHeader(s string) string {
	body := strings.TrimSuffix(strings.TrimPrefix(s, "diff --git "), "\n")
	nl := s[len(strings.TrimRight(s, "\n")):]
	if strings.HasPrefix(body, `"`) || !strings.HasPrefix(body, "a/") {
		return s // quoted or odd names: left as they are
	}
	i := strings.LastIndex(body, " b/")
	if n := len(body); n%2 == 1 && body[2:n/2] == body[n/2+3:] {
		i = n / 2
	}
	if i < 0 {
		return s
	}
	return "diff --git a/" + body[i+3:] + " b/" + body[2:i] + nl
}

// reverseHunkHeader swaps the ranges of "@@ -a,b +c,d @@ text" and returns
// the old and new line counts of the original.
func reverseHunkHeader(s string) (line string, oldN, newN int, ok bool) {
	rest := strings.TrimPrefix(s, "@@ -")
	end := strings.Index(rest, " @@")
	if end < 0 {
		return "", 0, 0, false
	}
	ranges, tail := rest[:end], rest[end:]
	o, n, found := strings.Cut(ranges, " +")
	if !found {
		return "", 0, 0, false
	}
	count := func(r string) (int, bool) {
		_, c, has := strings.Cut(r, ",")
		if !has {
			return 1, true
		}
		var v int
		_, err := fmt.Sscanf(c, "%d", &v)
		return v, err == nil
	}
	oc, ok1 := count(o)
	nc, ok2 := count(n)
	if !ok1 || !ok2 {
		return "", 0, 0, false
	}
	return "@@ -" + n + " +" + o + tail, oc, nc, true
}

// reverseIndex swaps the object ids of "index A..B[ mode]".
func reverseIndex(s string) string {
	body := strings.TrimSuffix(strings.TrimPrefix(s, "index "), "\n")
	nl := s[len(strings.TrimRight(s, "\n")):]
	ids, mode, hasMode := strings.Cut(body, " ")
	a, b, ok := strings.Cut(ids, "..")
	if !ok {
		return s
	}
	out := "index " + b + ".." + a
	if hasMode {
		out += " " + mode
	}
	return out + nl
}

// headerPair names the pair of header lines s starts: "old mode " and
// "new mode ", "rename from " and "rename to ", "copy from " and "copy to ".
func headerPair(s string) (first, second string, ok bool) {
	for _, p := range [][2]string{{"old mode ", "new mode "}, {"rename from ", "rename to "}, {"copy from ", "copy to "}} {
		if strings.HasPrefix(s, p[0]) {
			return p[0], p[1], true
		}
	}
	return "", "", false
}

// reverseHeaderLine swaps one extended header line of a file's diff.
func reverseHeaderLine(s string) string {
	for _, p := range [][2]string{
		{"new file mode ", "deleted file mode "}, {"deleted file mode ", "new file mode "},
		{"old mode ", "new mode "}, {"new mode ", "old mode "},
		{"rename from ", "rename to "}, {"rename to ", "rename from "},
		{"copy from ", "copy to "}, {"copy to ", "copy from "},
	} {
		if rest, ok := strings.CutPrefix(s, p[0]); ok {
			return p[1] + rest
		}
	}
	return s
}

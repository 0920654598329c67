package series

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/patchkit/patchkit/internal/diag"
)

// This file reads a patch file as `git am` does (Options.Mail): git
// mailsplit cuts a mailbox into mails, each mail's patch is what git
// mailinfo leaves after the message, and git apply applies it with the
// flags git am passes.

// isStrippedSignature reports whether line i is a mail signature separator
// "-- " whose trailing space an editor stripped: "--" alone. git am's git
// apply stops a hunk at its counts and ignores what follows, so it reads the
// line as the signature it was; patchkit's stricter check of a hunk that
// goes on past its counts does not apply to it.
func isStrippedSignature(lines *lineTable, i int) bool {
	return strings.TrimRight(lines.at(i), "\r\n") == "--"
}

// isFromLine is git mailsplit's is_from_line: a line that separates two
// mails of a mailbox, "From " and something that ends like a date
// ("... 00:00:00 2001"), with a year above 90.
func isFromLine(line string) bool {
	line = strings.TrimRight(line, "\n")
	if len(line) < 20 || !strings.HasPrefix(line, "From ") {
		return false
	}
	colon := strings.LastIndexByte(line[:len(line)-1], ':')
	if colon < 5+4 || colon+3 > len(line) {
		return false
	}
	digit := func(i int) bool { return i >= 0 && i < len(line) && line[i] >= '0' && line[i] <= '9' }
	if !digit(colon-4) || !digit(colon-2) || !digit(colon-1) || !digit(colon+1) || !digit(colon+2) {
		return false
	}
	rest := strings.TrimLeft(line[min(colon+3, len(line)):], " ")
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	year, _ := strconv.Atoi(rest[:n])
	return year > 90
}

// isMail is git am's test of a file it reads as a mailbox (its is_mail and
// the "From " line mailsplit splits at): it starts, after blank lines, with
// a From line or with header fields ("Name: value", continued by indented
// lines) up to a blank line. Anything else is "Patch format detection
// failed." to git am.
func isMail(raw []byte) bool {
	lines := splitKeep(raw)
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	if i == len(lines) {
		return false
	}
	if isFromLine(lines[i]) {
		return true
	}
	for ; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], "\r\n")
		if l == "" {
			return true
		}
		if l[0] == ' ' || l[0] == '\t' {
			continue
		}
		name, _, ok := strings.Cut(l, ":")
		if !ok || name == "" {
			return false
		}
		for _, c := range []byte(name) {
			if c < '!' || c > '~' {
				return false
			}
		}
	}
	return true
}

// dropCR turns every CRLF line ending into LF, as git mailsplit does
// without --keep-cr.
func dropCR(raw []byte) []byte {
	if !bytes.Contains(raw, []byte("\r\n")) {
		return raw
	}
	return bytes.ReplaceAll(raw, []byte("\r\n"), []byte("\n"))
}

// splitMbox cuts a mailbox into its mails, as git mailsplit does: a file
// that starts (after blank lines) with a From line is cut before every From
// line; any other file is one mail. Each part keeps its From line; the first
// line of each part in the file (1-based) comes with it.
func splitMbox(raw []byte) (parts [][]byte, firstLines []int) {
	lines := splitKeep(raw)
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	if i == len(lines) || !isFromLine(lines[i]) {
		return [][]byte{raw}, []int{1}
	}
	off := 0
	for k := 0; k < i; k++ {
		off += len(lines[k])
	}
	start, startLine := off, i+1
	for k := i + 1; k < len(lines); k++ {
		off += len(lines[k-1])
		if isFromLine(lines[k]) {
			parts = append(parts, raw[start:off])
			firstLines = append(firstLines, startLine)
			start, startLine = off, k+1
		}
	}
	parts = append(parts, raw[start:])
	firstLines = append(firstLines, startLine)
	return parts, firstLines
}

// parseMail parses one file as git am reads it: each mail of the mailbox
// is a Patch. A file of one mail keeps its name; the mails of a mailbox of
// several are named shown#1, shown#2, ... and their lines are counted from
// their From line (the message says where it starts in the file).
func parseMail(shown string, raw []byte, o Options, opts []Option) ([]*Patch, error) {
	if !isMail(raw) {
		return nil, diag.Inputf(shown, 1, "not a mail: git am reads each file as a mailbox (\"Patch format detection failed.\"); write it with git format-patch, or give the unit apply.tool: git-apply")
	}
	if !o.KeepCR {
		raw = dropCR(raw)
	}
	parts, firsts := splitMbox(raw)
	if len(parts) == 1 {
		p, err := Parse(shown, raw, opts...)
		if err != nil {
			return nil, err
		}
		return []*Patch{p}, nil
	}
	out := make([]*Patch, 0, len(parts))
	for k, part := range parts {
		name := shown + "#" + strconv.Itoa(k+1)
		p, err := Parse(name, part, opts...)
		if err != nil {
			return nil, mailPartError(err, firsts[k])
		}
		p.Mailbox = shown
		out = append(out, p)
	}
	return out, nil
}

// mailPartError says where in the file the mail of err starts.
func mailPartError(err error, first int) error {
	if ie, ok := err.(*diag.InputError); ok {
		c := *ie
		c.Msg += " (lines counted from the mail's From line, line " + strconv.Itoa(first) + " of the file)"
		return &c
	}
	return err
}

// CheckRewritable refuses, as bad input naming the file, a series that holds
// a mailbox of several mails: upgrade and refresh write one patch per file,
// and would write each mail to a file of its own beside the mailbox.
func CheckRewritable(patches []*Patch) error {
	for _, p := range patches {
		if p.Mailbox != "" {
			return diag.Inputf(p.Mailbox, 0, "a mailbox of several mails: patchkit rewrites one patch per file; split it first (git mailsplit, or git am and git format-patch)")
		}
	}
	return nil
}

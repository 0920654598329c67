package apply

import (
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// Whitespace error messages, as git's whitespace_error_string words them.
const (
	msgTrailing       = "trailing whitespace"
	msgSpaceBeforeTab = "space before tab in indent"
	msgBlankAtEOF     = "new blank line at EOF"
)

// isSpace is git's isspace: only space, tab, LF and CR.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// isBlank reports whether s is only whitespace (git's ws_blank_line).
func isBlank(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isSpace(s[i]) {
			return false
		}
	}
	return true
}

// wsCheck returns the whitespace errors of one new line under git's default
// core.whitespace (blank-at-eol, space-before-tab, blank-at-eof), as ws.c's
// ws_check does; crAtEOL adds cr-at-eol. "" means none.
func wsCheck(line string, crAtEOL bool) string {
	line = strings.TrimSuffix(line, "\n")
	if crAtEOL {
		line = strings.TrimSuffix(line, "\r")
	}
	blankAtEOL := false
	end := len(line)
	for end > 0 && isSpace(line[end-1]) {
		end--
		blankAtEOL = true
	}
	spaceBeforeTab := false
	written := 0
	for i := 0; i < end; i++ {
		if line[i] == ' ' {
			continue
		}
		if line[i] != '\t' {
			break
		}
		if written < i {
			spaceBeforeTab = true
		}
		written = i + 1
	}
	var msgs []string
	if blankAtEOL {
		msgs = append(msgs, msgTrailing)
	}
	if spaceBeforeTab {
		msgs = append(msgs, msgSpaceBeforeTab)
	}
	return strings.Join(msgs, ", ")
}

// endsCRLF reports whether a patch line ended in CRLF in the patch file
// (git's check_old_for_crlf). A line without newline had its CR just before
// the newline that diff added.
func endsCRLF(text string) bool {
	if strings.HasSuffix(text, "\r\n") {
		return true
	}
	return !strings.HasSuffix(text, "\n") && strings.HasSuffix(text, "\r")
}

// parseWhitespace runs the checks that git apply makes while it parses a
// file diff: every new line (added, or removed when reversing) is checked,
// and old lines ending in CRLF make the rest of the file diff accept a CR at
// the end of a line. It returns the problems in patch order.
func parseWhitespace(fp *filePatch, reverse bool, file string) []Problem {
	var out []Problem
	for _, fr := range fp.frags {
		for l := range fr.all() {
			switch l.origOp {
			case gitdiff.OpContext:
				if endsCRLF(l.text) {
					fp.crAtEOL = true
				}
			case gitdiff.OpDelete:
				if !reverse {
					if endsCRLF(l.text) {
						fp.crAtEOL = true
					}
					continue
				}
			case gitdiff.OpAdd:
				if reverse {
					if endsCRLF(l.text) {
						fp.crAtEOL = true
					}
					continue
				}
			}
			if l.op != gitdiff.OpAdd {
				continue
			}
			if msg := wsCheck(l.text, fp.crAtEOL); msg != "" {
				out = append(out, Problem{
					Kind: KindWhitespace, File: file, Line: l.line,
					Path: fp.name(), Message: msg,
				})
			}
		}
	}
	return out
}

package obsolete

import (
	"fmt"
	"strings"

	"github.com/patchkit/patchkit/internal/apply"
)

// Short abbreviates a commit id for messages.
func Short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func commitPhrase(r Result) string {
	if r.Commit == "" {
		return ""
	}
	if r.Subject == "" {
		return "upstream commit " + Short(r.Commit)
	}
	return fmt.Sprintf("upstream commit %s (%q)", Short(r.Commit), r.Subject)
}

// evidence says in one sentence why r has its status.
func evidence(r Result, patchID bool) string {
	cp := commitPhrase(r)
	switch r.Status {
	case StatusPresent:
		switch r.Via {
		case ViaPatchID:
			return fmt.Sprintf("%s has the same patch-id (git patch-id --stable), and no hunk was reverted since (%s); the patch does not reverse-apply (upstream's context differs)", cp, hunkVias(r.Hunks))
		case ViaCarried:
			return fmt.Sprintf("every hunk is upstream (%s): %s", hunkVias(r.Hunks), carrierPhrase(r.Commits))
		case ViaHunks:
			s := "every hunk reverse-applies on its own"
			if len(r.Commits) > 0 {
				s += "; " + carrierPhrase(r.Commits)
			}
			return s
		default:
			s := "the patch reverse-applies cleanly"
			switch {
			case patchID:
				s += "; " + cp + " has the same patch-id"
			case cp != "":
				s += "; " + cp + " brought the change"
			}
			return s
		}
	case StatusApplies:
		if moved := offsetList(r.Offsets); moved != "" {
			return "applies with offsets: " + moved
		}
		return "applies cleanly"
	case StatusPartial:
		s := "hunks already upstream: " + hunkList(r.Hunks, StatusPresent)
		if len(r.Commits) > 0 {
			s += " (" + carrierPhrase(r.Commits) + ")"
		}
		if l := hunkList(r.Hunks, StatusApplies); l != "" {
			s += "; hunks that still apply: " + l
		}
		if l := hunkList(r.Hunks, StatusConflict); l != "" {
			s += "; hunks that need a refresh: " + l
		}
		return s + removedNote(r)
	case StatusSuperseded:
		switch r.Via {
		case ViaCarried:
			if len(r.Commits) > 1 {
				return fmt.Sprintf("applies in neither direction, but every hunk's change is there (%s): upstream's own version; %s", hunkVias(r.Hunks), carrierPhrase(r.Commits))
			}
			return fmt.Sprintf("applies in neither direction, but every hunk's change is there (%s); %s landed upstream's own version", hunkVias(r.Hunks), cp)
		case ViaRewritten:
			s := fmt.Sprintf("upstream made the change its own way: %s", carrierPhrase(r.Commits))
			if r.AddedLines != nil {
				s += "; " + lineMatchPhrase(*r.AddedLines)
			}
			return s
		}
		s := "applies in neither direction, but " + lineMatchPhrase(*r.AddedLines)
		if cp != "" {
			s += "; " + cp + " introduced them"
		}
		return s
	case StatusConflict:
		if r.TargetRemoved() {
			return "target removed: " + removedPhrase(r.Removed) + ": drop the patch or rewrite it for what replaced it"
		}
		s := "does not apply"
		if r.Conflict != nil {
			s = r.Conflict.Message
			if r.Conflict.Line > 0 {
				s += fmt.Sprintf(" (patch line %d)", r.Conflict.Line)
			}
		}
		if l := hunkList(r.Hunks, StatusPresent); l != "" {
			s += "; already upstream: " + l
		}
		if len(r.Commits) > 0 {
			s += "; " + carrierPhrase(r.Commits)
		}
		if r.AddedLines != nil && r.AddedLines.Present > 0 {
			s += "; " + lineMatchPhrase(*r.AddedLines)
		}
		return s + removedNote(r)
	}
	return ""
}

// removedNote names the hunks whose files upstream removed, in a result
// whose other hunks decide: "; hunks whose file upstream removed: ...".
func removedNote(r Result) string {
	if r.Removed == nil || r.Removed.All {
		return ""
	}
	var hs []string
	for _, h := range r.Hunks {
		if h.Via == ViaRemoved {
			hs = append(hs, hunkName(h))
		}
	}
	if len(hs) == 0 {
		return ""
	}
	return fmt.Sprintf("; hunks whose file upstream removed (%s): %s: drop them or rewrite them for what replaced it",
		removedPhrase(r.Removed), strings.Join(hs, ", "))
}

// lineMatchPhrase says how many changed lines are upstream.
func lineMatchPhrase(lm LineMatch) string {
	if lm.Removed == 0 {
		return fmt.Sprintf("%d of its %d added lines are upstream", lm.Present, lm.Total)
	}
	return fmt.Sprintf("%d of its %d changed lines are upstream (%d of %d added lines there, %d of %d removed lines gone)",
		lm.Present, lm.Total, lm.Present-lm.Gone, lm.Total-lm.Removed, lm.Gone, lm.Removed)
}

// hunkList names the hunks with status, comma-separated, but those whose file
// upstream removed (removedNote names them).
func hunkList(hs []Hunk, status string) string {
	var out []string
	for _, h := range hs {
		if h.Status == status && h.Via != ViaRemoved {
			out = append(out, hunkName(h))
		}
	}
	return strings.Join(out, ", ")
}

// hunkVias says how the present hunks were found.
func hunkVias(hs []Hunk) string {
	var out []string
	for _, v := range []struct{ via, say string }{
		{ViaReverseApply, "reverse-apply"},
		{ViaLines, "by their lines in their own context"},
		{ViaLanded, "landed, with upstream edits around them since"},
		{ViaMoved, "moved elsewhere by upstream since"},
	} {
		if n := countHunks(hs, StatusPresent, v.via); n > 0 || v.via == ViaReverseApply && len(out) == 0 && countHunks(hs, StatusPresent, "") == 0 {
			out = append(out, fmt.Sprintf("%d %s", n, v.say))
		}
	}
	if len(out) == 0 {
		return "0 reverse-apply"
	}
	return strings.Join(out, ", ")
}

func hunkName(h Hunk) string {
	if h.Hunk == "" {
		return fmt.Sprintf("%s (line %d)", h.Path, h.Line)
	}
	return fmt.Sprintf("%s %s (line %d)", h.Path, hunkRange(h.Hunk), h.Line)
}

// hunkRange keeps "@@ -a,b +c,d @@" of a hunk header.
func hunkRange(h string) string {
	if len(h) > 2 {
		if i := strings.Index(h[2:], "@@"); i >= 0 {
			return h[:i+4]
		}
	}
	return h
}

func offsetList(hs []apply.HunkResult) string {
	var moved []string
	for _, h := range hs {
		if h.Offset != 0 {
			moved = append(moved, fmt.Sprintf("%s %s %+d", h.Path, hunkRange(h.Hunk), h.Offset))
		}
	}
	return strings.Join(moved, ", ")
}

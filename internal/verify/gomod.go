package verify

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/gomod"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/tree"
)

// CheckGoMod is the check that, after the series, every go.mod the series
// changes (and its go.sum) is what `go mod tidy` would leave. It is reported
// on the last patch that touches the module's go.mod or go.sum.
const CheckGoMod = "gomod"

// advisoryFindings is the header check of a dependency-bump patch: the
// advisory ids (CVE-, GO-) its subject or description mention are named in
// a field too (Advisory: CVE-2025-22870, GO-2025-3503), so that tools can
// list the advisories a series fixes.
func advisoryFindings(p *series.Patch) []finding {
	if gomod.SplitPatch(p) == nil {
		return nil
	}
	missing := gomod.MissingAdvisories(p.Header)
	if len(missing) == 0 {
		return nil
	}
	return []finding{{StatusFail, fmt.Sprintf("a dependency bump that mentions %s names no advisory: add \"Advisory: %s\" to the header",
		strings.Join(missing, ", "), strings.Join(missing, ", ")), 1}}
}

// checkGoMod runs `go mod tidy` on a copy of each module whose go.mod or
// go.sum the series changes, with the series applied (state), and compares.
// The go command runs against the environment's GOPROXY (GOPROXY=off with
// --offline): a go command that cannot run (a module it cannot fetch) is a
// warning, a difference is a failure.
func (v *verifier) checkGoMod(ctx context.Context, state *apply.Applier) error {
	last := map[string]*entry{} // module dir -> last patch touching it
	var dirs []string
	for _, e := range v.entries {
		if e.patch == nil {
			continue
		}
		for _, f := range e.patch.Files {
			for _, n := range []string{f.OldName, f.NewName} {
				if !gomod.IsGoMod(n) && !gomod.IsGoSum(n) {
					continue
				}
				d := gomod.ModDir(n)
				if last[d] == nil {
					dirs = append(dirs, d)
				}
				last[d] = e
			}
		}
	}
	if len(dirs) == 0 {
		return nil
	}
	src, err := v.im.Cache.Source(v.im.Commit)
	if err != nil {
		return err
	}
	sort.Strings(dirs)
	g := gomod.Go{Offline: v.im.Cache.Offline()}
	byEntry := map[*entry][]string{}
	worst := map[*entry]string{}
	for _, d := range dirs {
		e := last[d]
		if c, ok := e.checks[CheckApply]; ok && c.Status != StatusPass {
			byEntry[e] = append(byEntry[e], "the series does not apply")
			if worst[e] == "" {
				worst[e] = StatusSkip
			}
			continue
		}
		msg, status, err := tidyOne(ctx, g, src, state, d)
		if err != nil {
			return err
		}
		byEntry[e] = append(byEntry[e], msg)
		if rank(status) > rank(worst[e]) {
			worst[e] = status
		}
	}
	for e, msgs := range byEntry {
		e.set(Check{Check: CheckGoMod, Status: worst[e], Message: strings.Join(msgs, "\n")})
	}
	return nil
}

func rank(s string) int {
	switch s {
	case StatusFail:
		return 3
	case StatusWarn:
		return 2
	case StatusPass:
		return 1
	}
	return 0
}

// tidyOne runs go mod tidy on the module at dir of the patched tree (src
// with state's changes) and says whether it changed go.mod or go.sum.
func tidyOne(ctx context.Context, g gomod.Go, src tree.Walker, state *apply.Applier, dir string) (msg, status string, err error) {
	name := filepath.ToSlash(filepath.Join(dir, "go.mod"))
	tmp, err := os.MkdirTemp("", "patchkit-verify-gomod-*")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(tmp)
	if err := gomod.Materialize(tmp, src, state.Changes(), dir); err != nil {
		return "", "", err
	}
	modDir := filepath.Join(tmp, filepath.FromSlash(dir))
	oldMod, _ := os.ReadFile(filepath.Join(modDir, "go.mod"))
	oldSum, _ := os.ReadFile(filepath.Join(modDir, "go.sum"))
	if oldMod == nil {
		return name + " is missing after the series", StatusFail, nil
	}
	newMod, newSum, err := g.Tidy(ctx, modDir)
	if err != nil {
		if ctx.Err() != nil {
			return "", "", ctx.Err()
		}
		return fmt.Sprintf("%s: go mod tidy could not run, so its consistency is unknown: %s", name, firstLine(err.Error())), StatusWarn, nil
	}
	var diffs []string
	if d := lineDiff(oldMod, newMod); d != "" {
		diffs = append(diffs, "go.mod: "+d)
	}
	if d := lineDiff(oldSum, newSum); d != "" {
		diffs = append(diffs, "go.sum: "+d)
	}
	if len(diffs) == 0 {
		return name + " and its go.sum are what go mod tidy leaves", StatusPass, nil
	}
	return fmt.Sprintf("%s and its go.sum are not what go mod tidy leaves (run go mod tidy after the series and carry the result in the patch): %s", name, strings.Join(diffs, "; ")), StatusFail, nil
}

// lineDiff names the lines tidy would add and remove, a few of each.
func lineDiff(before, after []byte) string {
	if bytes.Equal(before, after) {
		return ""
	}
	count := func(b []byte) map[string]int {
		m := map[string]int{}
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				m[l]++
			}
		}
		return m
	}
	bm, am := count(before), count(after)
	var add, del []string
	for l, n := range am {
		if bm[l] < n {
			add = append(add, l)
		}
	}
	for l, n := range bm {
		if am[l] < n {
			del = append(del, l)
		}
	}
	sort.Strings(add)
	sort.Strings(del)
	var parts []string
	if len(add) > 0 {
		parts = append(parts, fmt.Sprintf("tidy adds %s", few(add)))
	}
	if len(del) > 0 {
		parts = append(parts, fmt.Sprintf("tidy removes %s", few(del)))
	}
	if len(parts) == 0 {
		return "tidy reorders or reformats it"
	}
	return strings.Join(parts, ", ")
}

func few(ls []string) string {
	const max = 3
	q := make([]string, 0, max)
	for i, l := range ls {
		if i == max {
			break
		}
		q = append(q, fmt.Sprintf("%q", l))
	}
	s := strings.Join(q, ", ")
	if len(ls) > max {
		s += fmt.Sprintf(" and %d more", len(ls)-max)
	}
	return s
}

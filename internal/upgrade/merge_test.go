package upgrade

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/series"
)

// mergeFile runs `git merge-file -p ours base theirs`: the merged text and
// whether it was clean.
func gitMergeFile(t *testing.T, base, ours, theirs string) (string, bool) {
	t.Helper()
	dir := t.TempDir()
	for name, s := range map[string]string{"base": base, "ours": ours, "theirs": theirs} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("git", "merge-file", "-p", "ours", "base", "theirs")
	cmd.Dir = dir
	cmd.Env = gittest.Env()
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() > 0 && ee.ExitCode() < 128 {
			return string(out), false
		}
		t.Fatalf("git merge-file: %v", err)
	}
	return string(out), true
}

func TestMerge3Cases(t *testing.T) {
	base := "a\nb\nc\nd\ne\nf\ng\nh\n"
	tests := []struct {
		name         string
		ours, theirs string
	}{
		{"theirs only", base, "a\nb\nC\nd\ne\nf\ng\nh\n"},
		{"ours only", "a\nB\nc\nd\ne\nf\ng\nh\n", base},
		{"apart", "A\nb\nc\nd\ne\nf\ng\nh\n", "a\nb\nc\nd\ne\nf\ng\nH\n"},
		{"same change", "a\nb\nX\nd\ne\nf\ng\nh\n", "a\nb\nX\nd\ne\nf\ng\nh\n"},
		{"conflict", "a\nb\nX\nd\ne\nf\ng\nh\n", "a\nb\nY\nd\ne\nf\ng\nh\n"},
		{"adjacent", "a\nb\nX\nd\ne\nf\ng\nh\n", "a\nb\nc\nY\ne\nf\ng\nh\n"},
		{"insert same place", "a\nb\nX\nc\nd\ne\nf\ng\nh\n", "a\nb\nY\nc\nd\ne\nf\ng\nh\n"},
		{"insert and delete elsewhere", "a\nb\nc\nd\ne\ng\nh\n", "new\na\nb\nc\nd\ne\nf\ng\nh\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMerge(t, base, tt.ours, tt.theirs)
		})
	}
}

func checkMerge(t *testing.T, base, ours, theirs string) {
	t.Helper()
	want, wantClean := gitMergeFile(t, base, ours, theirs)
	got, conflicts := Merge3(series.SplitKeep(base), series.SplitKeep(ours), series.SplitKeep(theirs))
	if clean := len(conflicts) == 0; clean != wantClean {
		t.Fatalf("Merge3(%q, %q, %q) clean = %v, git merge-file says %v:\n%s", base, ours, theirs, clean, wantClean, want)
	}
	if wantClean && strings.Join(got, "") != want {
		t.Errorf("Merge3() = %q, git merge-file = %q", strings.Join(got, ""), want)
	}
}

// TestMerge3Random compares Merge3 with git merge-file on random edits of a
// file of distinct lines (so that every diff has one best alignment).
func TestMerge3Random(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	fresh := 0
	edit := func(lines []string) []string {
		out := append([]string(nil), lines...)
		for k := r.Intn(3); k >= 0; k-- {
			i := r.Intn(len(out) + 1)
			fresh++
			switch r.Intn(3) {
			case 0:
				out = append(out[:i], append([]string{fmt.Sprintf("n%d\n", fresh)}, out[i:]...)...)
			case 1:
				if i < len(out) {
					out = append(out[:i], out[i+1:]...)
				}
			default:
				if i < len(out) {
					out[i] = fmt.Sprintf("r%d\n", fresh)
				}
			}
		}
		return out
	}
	for n := 0; n < 120; n++ {
		var base []string
		for i := 0; i < 5+r.Intn(25); i++ {
			base = append(base, fmt.Sprintf("b%d\n", i))
		}
		ours := edit(base)
		theirs := edit(base)
		if r.Intn(4) == 0 {
			theirs = append([]string(nil), ours...) // the same change
		}
		checkMerge(t, strings.Join(base, ""), strings.Join(ours, ""), strings.Join(theirs, ""))
	}
}

package series

import (
	"errors"
	"strings"
	"testing"
)

// TestRevertPatchIDMatchesGit: for a commit of every kind, RevertPatchID of
// its diff (as obsolete-check's git log -p prints it) is `git patch-id
// --stable` of `git diff C C^`, and the patch-id of the commit that `git
// revert` makes of it.
func TestRevertPatchIDMatchesGit(t *testing.T) {
	r, cases := patchIDFixture(t)
	for _, c := range cases {
		c.change()
		commit := r.Commit(c.name)
		t.Run(c.name, func(t *testing.T) {
			diff := r.Git(append(append([]string{"show", "--format=", "--binary", "--full-index"}, c.show...), commit)...)
			got, err := RevertPatchID([]byte(diff))
			if strings.Contains(diff, "\ncopy from ") {
				if !errors.Is(err, ErrNotReversible) {
					t.Errorf("RevertPatchID(a copy) = %q, %v; want ErrNotReversible", got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("RevertPatchID() = %v", err)
			}
			reversed := r.Git(append(append([]string{"diff", "--binary", "--full-index"}, c.show...), commit, commit+"^")...)
			if want := gitPatchID(t, r.Dir, []byte(reversed)); got != want {
				t.Errorf("RevertPatchID() = %s, want %s (git diff C C^ | git patch-id --stable)\ndiff:\n%s\nreversed by git:\n%s\nby RevertPatchID:\n%s", got, want, diff, reversed, reverseDiff([]byte(diff)))
			}
			// git revert's commit, undone at once so the next case starts
			// from this one.
			r.Git("revert", "--no-edit", commit)
			revert := r.Git(append([]string{"show", "--format=", "--binary", "--full-index"}, c.show...)...)
			if want := gitPatchID(t, r.Dir, []byte(revert)); got != want {
				t.Errorf("RevertPatchID() = %s, git revert's commit has %s", got, want)
			}
			r.Git("reset", "-q", "--hard", commit)
		})
	}
	if _, err := RevertPatchID([]byte("no diff here\n")); err == nil || !strings.Contains(err.Error(), "no patch-id") {
		t.Errorf("RevertPatchID(no diff) = %v, want ErrNoPatchID", err)
	}
}

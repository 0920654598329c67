package apply

import (
	"flag"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

var randomCases = flag.Int("parity.random", 30, "number of random parity cases")

var (
	cleanWords = []string{"a", "b", "c", "}", "", "\treturn", "d", "e", "a", "b"}
	dirtyWords = []string{"a", "b", "", "x  ", "y\r", " \tz", ""}
)

// randomText is n lines drawn from a small alphabet, so that many lines
// repeat and hunks can match in more than one place.
func randomText(rng *rand.Rand, n int) string {
	words := cleanWords
	if rng.Intn(8) == 0 {
		words = dirtyWords
	}
	var b strings.Builder
	for range n {
		b.WriteString(words[rng.Intn(len(words))])
		b.WriteByte('\n')
	}
	s := b.String()
	if rng.Intn(5) == 0 {
		s = strings.TrimSuffix(s, "\n")
	}
	return s
}

// mutate inserts, deletes and changes a few lines of s.
func mutate(rng *rand.Rand, s string, edits int) string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for range edits {
		i := rng.Intn(len(lines) + 1)
		switch rng.Intn(3) {
		case 0:
			lines = append(lines[:i], append([]string{randomText(rng, 1)}, lines[i:]...)...)
		case 1:
			if i < len(lines) {
				lines = append(lines[:i], lines[i+1:]...)
			}
		default:
			if i < len(lines) {
				lines[i] = randomText(rng, 1)
			}
		}
		if len(lines) == 0 {
			lines = []string{"z\n"}
		}
	}
	out := strings.Join(lines, "")
	if !strings.HasSuffix(out, "\n") && rng.Intn(2) == 0 {
		out += "\n"
	}
	return out
}

// TestParityRandom compares patchkit with git apply on random files, random
// changes, and bases that drifted from what the patch was made against.
func TestParityRandom(t *testing.T) {
	for i := range *randomCases {
		seed := int64(i + 1)
		t.Run(fmt.Sprintf("seed%03d", seed), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewSource(seed))
			r := gittest.New(t)
			before := randomText(rng, 5+rng.Intn(40))
			r.Write("f.txt", before)
			r.Commit("before")
			var patches []string
			cur := before
			for range 1 + rng.Intn(2) {
				cur = mutate(rng, cur, 1+rng.Intn(4))
				r.Write("f.txt", cur)
				args := []string{}
				if rng.Intn(4) == 0 {
					args = append(args, "-U1")
				}
				patches = append(patches, commitPatch(t, r, args...))
			}
			reverse := rng.Intn(4) == 0
			base := before
			if reverse {
				base = cur
				for i, j := 0, len(patches)-1; i < j; i, j = i+1, j-1 {
					patches[i], patches[j] = patches[j], patches[i]
				}
			}
			if rng.Intn(3) > 0 {
				base = mutate(rng, base, 1+rng.Intn(3))
			}
			r.Write("f.txt", base)
			checkParity(t, snap(t, r.Dir), patches, reverse)
		})
	}
}

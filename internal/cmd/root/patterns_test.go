package root

import (
	"testing"

	"github.com/patchkit/patchkit/internal/lazyre"
)

// TestPatternsCompile compiles every package-level pattern of every package
// patchkit links (they compile on first use, internal/lazyre): a bad one
// fails here, not on a rare command's first use of it.
func TestPatternsCompile(t *testing.T) {
	if n := lazyre.MustCompileAll(); n < 50 {
		t.Fatalf("compiled %d patterns: patchkit has about 70, so the packages that declare them are not linked", n)
	}
}

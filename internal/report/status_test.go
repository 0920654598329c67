package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/patchkit/patchkit/internal/status"
)

// The markdown history keeps the latest changes, so a long history still
// fits an issue body.
func TestStatusMarkdownHistoryCap(t *testing.T) {
	r := &status.Report{}
	for i := 0; i < 50; i++ {
		r.History = append(r.History, status.Point{Time: time.Unix(int64(i)*86400, 0), Commit: fmt.Sprintf("%040d", i), Count: i})
	}
	md := StatusMarkdown(r)
	if !strings.Contains(md, "The last 40 of 50 changes.") {
		t.Errorf("markdown does not say the history is cut:\n%s", md)
	}
	if n := strings.Count(md, "\n| 19"); n != 40 {
		t.Errorf("history rows = %d, want 40", n)
	}
	if !strings.Contains(md, "| 49 |") || strings.Contains(md, "| 9 |") {
		t.Errorf("markdown keeps the wrong rows:\n%s", md)
	}
}

func TestParseStatusFormat(t *testing.T) {
	for in, want := range map[string]Format{"": Text, "html": HTML, "json": JSON, "markdown": Markdown} {
		if got, err := ParseStatusFormat(in); got != want || err != nil {
			t.Errorf("ParseStatusFormat(%q) = %q, %v, want %q", in, got, err, want)
		}
	}
	if _, err := ParseStatusFormat("yaml"); err == nil || !strings.Contains(err.Error(), "html") {
		t.Errorf("ParseStatusFormat(yaml) error = %v, want one listing html", err)
	}
}

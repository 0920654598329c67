package adopt

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/patchkit/patchkit/internal/spec"
)

// TestRenderWritesCurrentSpelling: the spec init writes uses only the
// current spelling of every key (stamp[].format for a template, no kind),
// loads without a deprecation note, and its stamps are the entries read.
func TestRenderWritesCurrentSpelling(t *testing.T) {
	u := &Unit{Dir: "pkg/images/kamaji", Dockerfile: "pkg/images/kamaji/Dockerfile", Patches: "pkg/images/kamaji/patches"}
	stamps := []stampEntry{
		{"pkg/values.yaml", ".kamaji.image.repository", "{{.Registry}}/kamaji", "pkg/Makefile:4"},
		{"pkg/values.yaml", ".kamaji.image.tag", "{{.Tag}}@{{.Digest}}", "pkg/Makefile:5"},
		{"pkg/values.yaml", ".kamaji.name", "kamaji", "pkg/Makefile:6"},
	}
	out := render(u, value{Value: "https://github.com/clastix/kamaji"}, value{Value: "v1.0.0"}, &Fetch{Line: 3, How: "git clone"}, nil, stamps)
	if old := regexp.MustCompile(`(?m)^\s+(-\s+)?(kind|value|target|from|to):`).Find(out); old != nil {
		t.Errorf("render wrote the deprecated key %q:\n%s", old, out)
	}
	s, err := spec.LoadUnitReader(bytes.NewReader(out), t.TempDir(), spec.Unit{Name: "kamaji", Dir: u.Dir})
	if err != nil {
		t.Fatalf("the written spec does not load: %v\n%s", err, out)
	}
	if len(s.Deprecations) != 0 {
		t.Errorf("the written spec has deprecated spellings: %q\n%s", s.Deprecations, out)
	}
	if len(s.Stamp) != len(stamps) {
		t.Fatalf("stamp = %+v, want %d entries", s.Stamp, len(stamps))
	}
	for i, st := range stamps {
		if got := s.Stamp[i]; got.File != st.File || got.Key != st.Key || got.Value != st.Value || got.Kind != spec.StampYAML {
			t.Errorf("stamp[%d] = %+v, want %s %s %q", i, got, st.File, st.Key, st.Value)
		}
	}
}

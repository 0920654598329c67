package verify

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/stamp"
)

func diffOf(file, from, to string) string {
	return "Subject: change " + file + "\n\ndiff --git a/" + file + " b/" + file + "\n--- a/" + file + "\n+++ b/" + file +
		"\n@@ -1 +1 @@\n-" + from + "\n+" + to + "\n"
}

// stampUnit writes a unit with the given series and stamp entries, and a
// values file holding a digest no stamp recorded.
func stampUnit(t *testing.T, stamps string, patches map[string]string) (root string, s *spec.Spec) {
	t.Helper()
	root = t.TempDir()
	unit := filepath.Join(root, "images", "app")
	os.MkdirAll(filepath.Join(unit, "patches"), 0o755)
	y := "upstream: {url: file:///u, ref: v1}\npatches: ./patches\nimage: {repository: app, tag: v1}\nstamp:\n" + stamps
	files := map[string]string{"patchkit.yaml": y, "values.yaml": "# the chart\napp:\n  image: ghcr.io/o/app:v1@sha256:" + strings.Repeat("1", 64) + "\n  registry: ghcr.io/o\n"}
	for n, b := range patches {
		files["patches/"+n] = b
	}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(unit, n), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := spec.Load(root, "app")
	if err != nil {
		t.Fatal(err)
	}
	return root, s
}

func idsOf(t *testing.T, root string, s *spec.Spec) []series.Ident {
	t.Helper()
	ps, err := series.Load(filepath.Join(root, filepath.FromSlash(s.Patches)), s.Patches)
	if err != nil {
		t.Fatal(err)
	}
	return series.Idents(ps)
}

func doStamp(t *testing.T, root string, s *spec.Spec, ids []series.Ident) {
	t.Helper()
	p, err := stamp.Prepare(root, s, stamp.Value{Registry: "ghcr.io/o", Repository: "app", Tag: "v1", Digest: "sha256:" + strings.Repeat("2", 64), Series: ids, By: stamp.ByBuild})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(); err != nil {
		t.Fatal(err)
	}
}

func TestStampChecks(t *testing.T) {
	const ref = "  - {file: images/app/values.yaml, key: .app.image, format: ref%s}\n  - {file: images/app/values.yaml, key: .app.registry, value: '{{.Registry}}'}\n"
	one := map[string]string{"0001-a.diff": diffOf("a", "x", "y")}
	tests := []struct {
		name   string
		stale  string
		stamp  bool                                // stamp before the change
		change func(t *testing.T, root string)     // after the stamp
		ids    func([]series.Ident) []series.Ident // nil: the series on disk
		status string
		msg    []string
	}{
		{name: "no record", status: StatusWarn, msg: []string{"unknown provenance", "images/app/values.yaml .app.image holds \"ghcr.io/o/app:v1@sha256:1111", "no record"}},
		{name: "same series", stamp: true, status: StatusPass, msg: []string{"sha256:2222", "built from the series as it is (1 patches)"}},
		{name: "header edit keeps it", stamp: true, status: StatusPass, change: func(t *testing.T, root string) {
			os.WriteFile(filepath.Join(root, "images/app/patches/0001-a.diff"), []byte("Applied-Upstream: v2\n"+diffOf("a", "x", "y")), 0o644)
		}, msg: []string{"as it is"}},
		{name: "patches added and changed", stamp: true, status: StatusWarn, change: func(t *testing.T, root string) {
			os.WriteFile(filepath.Join(root, "images/app/patches/0001-a.diff"), []byte(diffOf("a", "x", "z")), 0o644)
			os.WriteFile(filepath.Join(root, "images/app/patches/0002-b.diff"), []byte(diffOf("b", "x", "y")), 0o644)
		}, msg: []string{"stale: images/app/values.yaml .app.image holds sha256:2222", "added 0002-b.diff; changed 0001-a.diff", "patchkit build --stamp"}},
		{name: "stale fails by config", stale: ", stale: fail", stamp: true, status: StatusFail, change: func(t *testing.T, root string) {
			os.Remove(filepath.Join(root, "images/app/patches/0001-a.diff"))
		}, msg: []string{"since then: removed 0001-a.diff"}},
		{name: "renamed", stamp: true, status: StatusWarn, change: func(t *testing.T, root string) {
			os.Rename(filepath.Join(root, "images/app/patches/0001-a.diff"), filepath.Join(root, "images/app/patches/0005-a.diff"))
		}, msg: []string{"renamed 0001-a.diff => 0005-a.diff"}},
		{name: "value edited since", stamp: true, status: StatusWarn, change: func(t *testing.T, root string) {
			p := filepath.Join(root, "images/app/values.yaml")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.ReplaceAll(string(b), strings.Repeat("2", 64), strings.Repeat("3", 64))), 0o644)
		}, msg: []string{"unknown provenance", "but patchkit stamped \"ghcr.io/o/app:v1@sha256:2222", "changed since"}},
		{name: "unusable series", stamp: true, ids: func([]series.Ident) []series.Ident { return nil }, status: StatusSkip, msg: []string{"cannot be used"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, s := stampUnit(t, strings.Replace(ref, "%s", tt.stale, 1), one)
			if tt.stamp {
				doStamp(t, root, s, idsOf(t, root, s))
			}
			if tt.change != nil {
				tt.change(t, root)
			}
			ids := idsOf(t, root, s)
			if tt.ids != nil {
				ids = tt.ids(ids)
			}
			checks := StampChecks(root, s, ids)
			// The registry value carries no digest: one check, for .app.image.
			if len(checks) != 1 {
				t.Fatalf("StampChecks() = %+v, want one check", checks)
			}
			c := checks[0]
			if c.Check != CheckStamp || c.Status != tt.status || c.Patch != "images/app/patchkit.yaml" || c.Line != 5 {
				t.Errorf("StampChecks() = %+v, want %s at images/app/patchkit.yaml:5", c, tt.status)
			}
			for _, m := range tt.msg {
				if !strings.Contains(c.Message, m) {
					t.Errorf("message %q does not say %q", c.Message, m)
				}
			}
		})
	}
}

// TestStampChecksMissingKey: a stamp target that is gone fails the check
// with the file and line.
func TestStampChecksMissingKey(t *testing.T) {
	root, s := stampUnit(t, "  - {file: images/app/values.yaml, key: .app.tag}\n", nil)
	checks := StampChecks(root, s, []series.Ident{})
	if len(checks) != 1 || checks[0].Status != StatusFail || !strings.Contains(checks[0].Message, "images/app/values.yaml") || !strings.Contains(checks[0].Message, ".app.tag not found") {
		t.Errorf("StampChecks() = %+v", checks)
	}
}

func TestSeriesDiff(t *testing.T) {
	id := func(n, i string) series.Ident { return series.Ident{Name: n, ID: i} }
	was := []series.Ident{id("1.diff", "a"), id("2.diff", "b"), id("3.diff", "c"), id("4.diff", "d")}
	now := []series.Ident{id("1.diff", "a"), id("2.diff", "B"), id("3b.diff", "c"), id("5.diff", "e")}
	got := SeriesDiff(was, now)
	want := Changes{Added: []string{"5.diff"}, Removed: []string{"4.diff"}, Changed: []string{"2.diff"}, Renamed: []string{"3.diff => 3b.diff"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SeriesDiff() = %+v, want %+v", got, want)
	}
	if s := got.String(); s != "added 5.diff; removed 4.diff; changed 2.diff; renamed 3.diff => 3b.diff" {
		t.Errorf("String() = %q", s)
	}
}

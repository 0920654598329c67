package spec

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// TestDiscoveryWalksOnce: listing a 10-unit monorepo and loading every unit
// by name walks the tree once with a Discovery, and gives what List and
// Load give, which walk it once per call.
func TestDiscoveryWalksOnce(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < 10; i++ {
		dir := filepath.Join(root, "packages", fmt.Sprintf("p%d", i), "images", fmt.Sprintf("img%d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(root, "patches", fmt.Sprintf("img%d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
		spec := fmt.Sprintf("upstream:\n  url: https://example.com/up.git\n  ref: v1.0.0\npatches: patches/img%d\n", i)
		if err := os.WriteFile(filepath.Join(dir, FileName), []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := walks.Load()
	want, err := List(root)
	if err != nil {
		t.Fatal(err)
	}
	var wantSpecs []*Spec
	for _, name := range want {
		s, err := Load(root, name)
		if err != nil {
			t.Fatalf("Load(%s) = %v", name, err)
		}
		wantSpecs = append(wantSpecs, s)
	}
	if n := walks.Load() - before; n != 11 {
		t.Fatalf("List and Load walked %d times, want 11: the count is wrong", n)
	}

	before = walks.Load()
	d := NewDiscovery(root)
	got, err := d.List()
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range got {
		s, err := d.Load(name)
		if err != nil {
			t.Fatalf("Discovery.Load(%s) = %v", name, err)
		}
		if !reflect.DeepEqual(s, wantSpecs[i]) {
			t.Errorf("Discovery.Load(%s) = %+v, Load gives %+v", name, s, wantSpecs[i])
		}
	}
	if n := walks.Load() - before; n != 1 {
		t.Errorf("a Discovery walked %d times for 10 units, want 1", n)
	}
	if !reflect.DeepEqual(got, want) || len(got) != 10 {
		t.Errorf("Discovery.List() = %v, List() = %v", got, want)
	}
	if _, err := d.Find("nosuch"); err == nil {
		t.Error("Discovery.Find(nosuch) found a unit")
	}
}

// TestDiscoveryChartFilesSameWalk: a Discovery's chart spec files come from
// the walk that finds its image units (one walk for both), and are what a
// walk for them alone finds: nested repositories' chart files included,
// their image units not, SkipDirs skipped.
func TestDiscoveryChartFilesSameWalk(t *testing.T) {
	root := t.TempDir()
	write := gittest.Files{TB: t, Root: root}.Write
	spec := "upstream:\n  url: https://example.com/up.git\n  ref: v1.0.0\npatches: ./patches\n"
	write("packages/a/images/a/"+FileName, spec)
	write("packages/a/"+ChartFileName, "charts: []\n")
	write("packages/b/"+ChartFileName, "charts: []\n")
	write(ChartFileName, "charts: []\n")
	write("vendor/c/"+ChartFileName, "charts: []\n")
	write("nested/"+RepoFileName, "")
	write("nested/images/n/"+FileName, spec)
	write("nested/pkg/"+ChartFileName, "charts: []\n")

	before := walks.Load()
	d := NewDiscovery(root)
	charts, err := d.ChartFiles()
	if err != nil {
		t.Fatal(err)
	}
	units, err := d.Units()
	if err != nil {
		t.Fatal(err)
	}
	if n := walks.Load() - before; n != 1 {
		t.Errorf("ChartFiles and Units walked %d times, want 1", n)
	}
	wantCharts := []string{"nested/pkg/" + ChartFileName, "packages/a/" + ChartFileName, "packages/b/" + ChartFileName, ChartFileName}
	if !reflect.DeepEqual(charts, wantCharts) {
		t.Errorf("ChartFiles() = %v, want %v", charts, wantCharts)
	}
	if want := []Unit{{Name: "a", Dir: "packages/a/images/a"}}; !reflect.DeepEqual(units, want) {
		t.Errorf("Units() = %v, want %v", units, want)
	}
}

// TestWalkAsWalkDir: the walk finds what filepath.WalkDir finds with the
// rules it states (the oracle below): units outside SkipDirs and nested
// repositories, regular files only, none at the root; chart files
// everywhere outside SkipDirs, symlinks included; a symlinked directory is
// not followed.
func TestWalkAsWalkDir(t *testing.T) {
	root := t.TempDir()
	mk := gittest.Files{TB: t, Root: root}.Write
	link := func(target, rel string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(rel))); err != nil {
			t.Fatal(err)
		}
	}
	for _, rel := range []string{
		FileName, ChartFileName, "a/" + FileName, "a/b/c/" + FileName, "a/-x/" + FileName, "a/.hidden/" + FileName,
		"node_modules/n/" + FileName, "x/vendor/" + ChartFileName, "x/.git/" + FileName, "x/_output/" + FileName,
		"n1/" + RepoFileName, "n1/u/" + FileName, "n1/c/" + ChartFileName, "n1/n2/" + RepoFileName, "n1/n2/u/" + FileName,
		"after/u/" + FileName, "after/" + ChartFileName, "d/" + FileName + "/keep", "n3/-first/" + FileName, "n3/" + RepoFileName,
	} {
		mk(rel, "")
	}
	mk("l/target", "")
	link("../a", "l/dir")
	link("target", "l/"+FileName)
	link("target", "l/"+ChartFileName)

	var wantUnits []Unit
	var wantCharts []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if p != root && contains(SkipDirs, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() == ChartFileName {
			wantCharts = append(wantCharts, rel)
		}
		if d.Name() != FileName || !d.Type().IsRegular() || filepath.Dir(p) == root {
			return nil
		}
		for dir := filepath.Dir(p); dir != root; dir = filepath.Dir(dir) {
			if _, err := os.Lstat(filepath.Join(dir, RepoFileName)); err == nil {
				return nil
			}
		}
		dir := path.Dir(rel)
		wantUnits = append(wantUnits, Unit{Name: path.Base(dir), Dir: dir})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(wantUnits, func(i, j int) bool { return wantUnits[i].Dir < wantUnits[j].Dir })
	sort.Strings(wantCharts)
	got := walk(root)
	if got.err != nil || got.chartsErr != nil {
		t.Fatalf("walk: %v, %v", got.err, got.chartsErr)
	}
	if !reflect.DeepEqual(got.units, wantUnits) || len(wantUnits) != 5 {
		t.Errorf("units %v, want %v", got.units, wantUnits)
	}
	if !reflect.DeepEqual(got.charts, wantCharts) || len(wantCharts) != 4 {
		t.Errorf("charts %v, want %v", got.charts, wantCharts)
	}
}

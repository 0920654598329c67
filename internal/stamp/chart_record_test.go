package stamp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// chartRoot is a repository with a Helm chart at packages/system/app (its
// values.yaml stamped at .image.tag) and a plain directory conf/ (its
// TAG file stamped), as cozystack lays them out.
func chartRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	chart := filepath.Join(root, "packages", "system", "app")
	os.MkdirAll(filepath.Join(chart, "charts", "sub"), 0o755)
	os.WriteFile(filepath.Join(chart, ChartFile), []byte("apiVersion: v2\nname: app\nversion: 0.1.0\n"), 0o644)
	os.WriteFile(filepath.Join(chart, "values.yaml"), []byte("image:\n  tag: old\nother:\n  tag: old\n"), 0o644)
	// a vendored subchart: the record still goes above the outermost chart
	os.WriteFile(filepath.Join(chart, "charts", "sub", ChartFile), []byte("apiVersion: v2\nname: sub\nversion: 0.1.0\n"), 0o644)
	os.WriteFile(filepath.Join(chart, "charts", "sub", "values.yaml"), []byte("tag: old\n"), 0o644)
	os.MkdirAll(filepath.Join(root, "conf"), 0o755)
	os.WriteFile(filepath.Join(root, "conf", "TAG"), []byte("old\n"), 0o644)
	return root
}

// TestRecordOutsideCharts: a stamped file inside a Helm chart gets its
// record in the directory holding the outermost chart, naming the file by
// its path from there; nothing is added under the chart (helm package
// would ship it). A file outside any chart keeps its record beside it.
func TestRecordOutsideCharts(t *testing.T) {
	root := chartRoot(t)
	s := specWith(t, root, "  - {file: packages/system/app/values.yaml, key: .image.tag}\n"+
		"  - {file: packages/system/app/charts/sub/values.yaml, key: .tag}\n  - {file: conf/TAG, value: '{{.Tag}}'}\n")
	p, err := Prepare(root, s, value)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(); err != nil {
		t.Fatal(err)
	}
	for _, inChart := range []string{"packages/system/app/" + RecordName, "packages/system/app/charts/sub/" + RecordName} {
		if _, err := os.Stat(filepath.Join(root, inChart)); !os.IsNotExist(err) {
			t.Errorf("a record inside the chart: %s (%v)", inChart, err)
		}
	}
	r := readRecordT(t, filepath.Join(root, "packages", "system", RecordName))
	if e := r.Lookup("app/values.yaml", ".image.tag"); e == nil || e.Digest != digest {
		t.Errorf("packages/system record lacks app/values.yaml .image.tag: %+v", r)
	}
	if e := r.Lookup("app/charts/sub/values.yaml", ".tag"); e == nil || e.Digest != digest {
		t.Errorf("packages/system record lacks app/charts/sub/values.yaml .tag: %+v", r)
	}
	conf := readRecordT(t, filepath.Join(root, "conf", RecordName))
	if e := conf.Lookup("TAG", ""); e == nil || e.Digest != digest {
		t.Errorf("conf/%s lacks TAG", RecordName)
	}
	// verify's reader finds them where Write put them.
	got, err := Inspect(root, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range got {
		if st.Record == nil || st.Record.Digest != digest {
			t.Errorf("Inspect %s %s: record %+v (in %s)", st.File, st.Key, st.Record, st.RecordFile)
		}
	}
}

// TestRecordLegacyInChartMigrates: a record an earlier version wrote
// beside a chart's values file is still read (Inspect finds its entries
// there); the next stamp moves every entry of it to the new record and
// deletes it, in the same write as the stamp.
func TestRecordLegacyInChartMigrates(t *testing.T) {
	root := chartRoot(t)
	chart := filepath.Join(root, "packages", "system", "app")
	oldDigest := "sha256:" + strings.Repeat("e", 64)
	os.WriteFile(filepath.Join(chart, "values.yaml"), []byte("image:\n  tag: v1.0.0@"+oldDigest+"\nother:\n  tag: v0.9.0@"+oldDigest+"\n"), 0o644)
	legacy := `{
  "version": 1,
  "stamps": [
    {"file": "values.yaml", "key": ".image.tag", "value": "v1.0.0@` + oldDigest + `", "digest": "` + oldDigest + `", "reference": "r", "image": "images/app", "series": "s", "patches": [], "by": "stamp"},
    {"file": "values.yaml", "key": ".other.tag", "value": "v0.9.0@` + oldDigest + `", "digest": "` + oldDigest + `", "reference": "r", "image": "images/other", "series": "s", "patches": [], "by": "build"}
  ]
}
`
	os.WriteFile(filepath.Join(chart, RecordName), []byte(legacy), 0o644)
	s := specWith(t, root, "  - {file: packages/system/app/values.yaml, key: .image.tag}\n")

	got, err := Inspect(root, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Record == nil || got[0].Record.Digest != oldDigest || got[0].RecordFile != "packages/system/app/"+RecordName {
		t.Fatalf("Inspect before the migration = %+v, want the legacy entry", got)
	}

	p, err := Prepare(root, s, value)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(chart, RecordName)); !os.IsNotExist(err) {
		t.Errorf("the legacy record is still in the chart: %v", err)
	}
	r := readRecordT(t, filepath.Join(root, "packages", "system", RecordName))
	if e := r.Lookup("app/values.yaml", ".image.tag"); e == nil || e.Digest != digest {
		t.Errorf("the new stamp's entry = %+v", e)
	}
	if e := r.Lookup("app/values.yaml", ".other.tag"); e == nil || e.Digest != oldDigest || e.Image != "images/other" || e.By != "build" {
		t.Errorf("the migrated entry of another unit = %+v", e)
	}
	if len(r.Stamps) != 2 {
		t.Errorf("new record has %d entries, want 2: %+v", len(r.Stamps), r)
	}
	got, err = Inspect(root, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Record == nil || got[0].Record.Digest != digest || got[0].RecordFile != "packages/system/"+RecordName {
		t.Errorf("Inspect after the migration = %+v", got)
	}
}

// TestRecordLegacyBadIsInput: a damaged legacy record is bad input naming
// it, and nothing is written.
func TestRecordLegacyBadIsInput(t *testing.T) {
	root := chartRoot(t)
	chart := filepath.Join(root, "packages", "system", "app")
	os.WriteFile(filepath.Join(chart, RecordName), []byte("{not json"), 0o644)
	s := specWith(t, root, "  - {file: packages/system/app/values.yaml, key: .image.tag}\n")
	p, err := Prepare(root, s, value)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(chart, "values.yaml"))
	if err := p.Write(); err == nil || !strings.Contains(err.Error(), "packages/system/app/"+RecordName) {
		t.Errorf("Write() with a damaged legacy record = %v, want an error naming it", err)
	}
	if after, _ := os.ReadFile(filepath.Join(chart, "values.yaml")); string(after) != string(before) {
		t.Error("values.yaml was written")
	}
	if _, err := os.Stat(filepath.Join(root, "packages", "system", RecordName)); !os.IsNotExist(err) {
		t.Errorf("a new record was written: %v", err)
	}
}

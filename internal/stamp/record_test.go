package stamp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
)

func readRecordT(t *testing.T, path string) Record {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the record: %v", err)
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("record %s: %v", data, err)
	}
	return r
}

var ids = []series.Ident{{Name: "0001-a.diff", ID: strings.Repeat("a", 40)}, {Name: "0002-b.diff", ID: strings.Repeat("b", 40)}}

// TestRecordBesideTheStamp: a stamp records, beside the stamped file, each
// value it wrote with the digest, the unit, the series fingerprint and the
// patches; the values file holds only the stamp.
func TestRecordBesideTheStamp(t *testing.T) {
	root := copyCase(t, "split")
	os.MkdirAll(filepath.Join(root, "sub"), 0o755)
	os.WriteFile(filepath.Join(root, "sub", "TAG"), []byte("old\n"), 0o644)
	s := specWith(t, root, "  - {file: values.yaml, key: .image, format: split}\n  - {file: sub/TAG, format: '{{.Tag}}'}\n")
	v := value
	v.Series, v.By = ids, ByBuild
	p, err := Prepare(root, s, v)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(); err != nil {
		t.Fatal(err)
	}
	// The values file holds the stamp and nothing of the record.
	if got, _ := os.ReadFile(filepath.Join(root, "values.yaml")); !strings.Contains(string(got), "  digest: "+digest+"\n") || strings.Contains(string(got), "series") {
		t.Errorf("values.yaml =\n%s", got)
	}
	r := readRecordT(t, filepath.Join(root, RecordName))
	if r.Version != RecordVersion || len(r.Stamps) != 3 {
		t.Fatalf("record = %+v, want 3 entries", r)
	}
	e := r.Lookup("values.yaml", ".image.digest")
	if e == nil || e.Value != digest || e.Digest != digest || e.Reference != "127.0.0.1:5000/org/greeter:v1.0.0@"+digest ||
		e.Series != series.Fingerprint(ids) || len(e.Patches) != 2 || e.Patches[1] != ids[1] || e.By != ByBuild || e.Image != s.Dir {
		t.Errorf("record entry of .image.digest = %+v", e)
	}
	sub := readRecordT(t, filepath.Join(root, "sub", RecordName))
	if e := sub.Lookup("TAG", ""); len(sub.Stamps) != 1 || e == nil || e.Value != "v1.0.0" || e.Digest != digest {
		t.Errorf("sub/%s = %+v", RecordName, sub)
	}
}

// TestRecordKeepsOtherEntries: a second unit stamping another key of the
// same file adds its entry; a restamp replaces the unit's own.
func TestRecordKeepsOtherEntries(t *testing.T) {
	root := copyCase(t, "kubeovn")
	a := specWith(t, root, "  - {file: values.yaml, key: .global.images.kubeovn.tag}\n")
	b := specWith(t, root, "  - {file: values.yaml, key: .networking.JOIN_CIDR, format: digest}\n")
	other := value
	other.Digest = "sha256:" + strings.Repeat("f", 64)
	for _, step := range []struct {
		s *spec.Spec
		v Value
	}{{a, value}, {b, value}, {a, other}} {
		p, err := Prepare(root, step.s, step.v)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Write(); err != nil {
			t.Fatal(err)
		}
	}
	r := readRecordT(t, filepath.Join(root, RecordName))
	if len(r.Stamps) != 2 || r.Stamps[0].Key != ".global.images.kubeovn.tag" || r.Stamps[0].Digest != other.Digest ||
		r.Stamps[1].Key != ".networking.JOIN_CIDR" || r.Stamps[1].Digest != digest || r.Stamps[0].By != ByStamp {
		t.Errorf("record = %+v", r)
	}
}

// TestBadRecordWritesNothing: a record that is not one is bad input
// naming it, and neither the values file nor the record changes.
func TestBadRecordWritesNothing(t *testing.T) {
	for name, content := range map[string]string{
		"not JSON":        "{\n",
		"unknown field":   `{"version":1,"stamps":[],"extra":1}`,
		"unknown version": `{"version":2,"stamps":[]}`,
	} {
		t.Run(name, func(t *testing.T) {
			root := copyCase(t, "greeter")
			rec := filepath.Join(root, RecordName)
			os.WriteFile(rec, []byte(content), 0o644)
			before, _ := os.ReadFile(filepath.Join(root, "values.yaml"))
			err := stampOnce(t, root, greeterStamp)
			if !diag.IsInput(err) || !strings.Contains(err.Error(), RecordName) {
				t.Errorf("stamp with a bad record = %v, want an input error naming %s", err, RecordName)
			}
			if after, _ := os.ReadFile(filepath.Join(root, "values.yaml")); string(after) != string(before) {
				t.Errorf("values.yaml changed")
			}
			if got, _ := os.ReadFile(rec); string(got) != content {
				t.Errorf("the record changed to %s", got)
			}
		})
	}
}

// TestFailedStampWritesNoRecord: a target that fails leaves no record.
func TestFailedStampWritesNoRecord(t *testing.T) {
	root := copyCase(t, "greeter")
	err := stampOnce(t, root, greeterStamp+"  - {file: values.yaml, key: .image.tga}\n")
	if err == nil {
		t.Fatal("stamp of a missing key succeeded")
	}
	if _, err := os.Stat(filepath.Join(root, RecordName)); !os.IsNotExist(err) {
		t.Errorf("a record was written by a failed stamp (%v)", err)
	}
}

// TestInspect: Inspect gives each stamped value as the file holds it,
// whether the digest shows in it, and its record entry.
func TestInspect(t *testing.T) {
	root := copyCase(t, "paths")
	stamps := "  - {file: values.yaml, key: .kamaji.image.repository, format: '{{.Registry}}/kamaji'}\n" +
		"  - {file: values.yaml, key: '.kamaji.extraArgs[0]', format: '--migrate-image={{.Reference}}'}\n"
	s := specWith(t, root, stamps)
	before, err := Inspect(root, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != 2 || before[0].CarriesDigest || !before[1].CarriesDigest || before[1].Record != nil || before[1].Entry != 1 || before[1].RecordFile != RecordName {
		t.Fatalf("Inspect() before the stamp = %+v", before)
	}
	if err := stampOnce(t, root, stamps); err != nil {
		t.Fatal(err)
	}
	after, err := Inspect(root, s)
	if err != nil {
		t.Fatal(err)
	}
	if r := after[1].Record; r == nil || r.Value != after[1].Value || !strings.HasPrefix(after[1].Value, "--migrate-image=") {
		t.Errorf("Inspect() after the stamp = %+v", after[1])
	}
	if _, err := os.Stat(filepath.Join(root, RecordName)); err != nil {
		t.Fatal(err)
	}
}

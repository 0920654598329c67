package series

import (
	"errors"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/diag"
)

const refDiff = `diff --git a/greet.txt b/greet.txt
index 1111111..2222222 100644
--- a/greet.txt
+++ b/greet.txt
@@ -1,3 +1,3 @@
 one
-hello
+hello world
 three
`

const refCommit = "635da9cc59aacfe868fd8b43ddccac9c47a9b7a3"

func refPatchID(t *testing.T) string {
	t.Helper()
	id, err := PatchID([]byte(refDiff))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestParseReference(t *testing.T) {
	pid := refPatchID(t)
	other := strings.Repeat("ab", 20)
	tests := []struct {
		name    string
		text    string
		wantErr string // substring; "" means it parses
		line    int    // the error's line
		files   int    // file diffs of the parsed patch
		plain   bool   // not a reference
	}{
		{name: "header only", text: "Subject: x\nOrigin: upstream, " + refCommit + "\nReference: " + refCommit + "\nPatch-Id: " + pid + "\n\nfree text\n"},
		{name: "case of keys", text: "reference: " + strings.ToUpper(refCommit) + "\npatch-id: " + pid + "\n"},
		{name: "materialized", text: "Reference: " + refCommit + "\nPatch-Id: " + pid + "\n\n" + refDiff, files: 1},
		{name: "materialized, edited", text: "Reference: " + refCommit + "\nPatch-Id: " + other + "\n\n" + refDiff, wantErr: "the diff's patch-id is " + pid + ", not " + other, line: 2},
		{name: "abbreviated commit", text: "Reference: 635da9c\nPatch-Id: " + pid + "\n", wantErr: "not a full 40-character commit id", line: 1},
		{name: "no patch-id", text: "Subject: x\nReference: " + refCommit + "\n", wantErr: "needs a Patch-Id field", line: 2},
		{name: "bad patch-id", text: "Reference: " + refCommit + "\nPatch-Id: 1234\n", wantErr: "not a 40-character hex patch-id", line: 2},
		{name: "reference twice", text: "Reference: " + refCommit + "\nReference: " + refCommit + "\nPatch-Id: " + pid + "\n", wantErr: "Reference given twice", line: 2},
		{name: "no reference, no diff", text: "Subject: x\nPatch-Id: " + pid + "\n", wantErr: "no diff found"},
		{name: "a Reference link beside a diff is no reference", text: "Reference: https://example.com/bug/1\n\n" + refDiff, files: 1, plain: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse("patches/x/0001-x.ref.diff", []byte(tt.text))
			if tt.wantErr != "" {
				var ie *diag.InputError
				if !errors.As(err, &ie) || !strings.Contains(err.Error(), tt.wantErr) || ie.Line != tt.line {
					t.Fatalf("Parse() = %v, want an InputError at line %d containing %q", err, tt.line, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse() = %v", err)
			}
			if tt.plain {
				if p.Reference != nil || len(p.Files) != tt.files {
					t.Errorf("Parse() = reference %+v, %d files; want a plain patch", p.Reference, len(p.Files))
				}
				return
			}
			if p.Reference == nil || p.Reference.Commit != refCommit || p.Reference.PatchID != pid {
				t.Fatalf("Reference = %+v, want commit %s, patch-id %s", p.Reference, refCommit, pid)
			}
			if len(p.Files) != tt.files || p.IsReference() != (tt.files == 0) {
				t.Errorf("Files = %d, IsReference() = %v; want %d files", len(p.Files), p.IsReference(), tt.files)
			}
			if p.PatchID != pid {
				t.Errorf("PatchID = %s, want the pinned %s", p.PatchID, pid)
			}
		})
	}
}

func TestMaterialize(t *testing.T) {
	pid := refPatchID(t)
	text, err := FormatReference(ReferenceHeader{Fields: []string{"Subject: greet the world", "Origin: upstream, " + refCommit}, Commit: refCommit, PatchID: pid})
	if err != nil {
		t.Fatalf("FormatReference() = %v", err)
	}
	ref, err := Parse("patches/x/0002-greet.ref.diff", text)
	if err != nil {
		t.Fatalf("Parse(FormatReference()) = %v\n%s", err, text)
	}
	if !ref.IsReference() || ref.Header.Subject != "greet the world" || ref.Header.Origin.Commit != refCommit {
		t.Fatalf("parsed reference = %+v, header %+v", ref.Reference, ref.Header)
	}

	p, err := Materialize(ref, []byte(refDiff))
	if err != nil {
		t.Fatalf("Materialize() = %v", err)
	}
	if len(p.Files) != 1 || p.PatchID != pid || p.Name != "0002-greet.ref.diff" || p.Path != ref.Path {
		t.Errorf("Materialize() = %d files, patch-id %s, name %s", len(p.Files), p.PatchID, p.Name)
	}
	if string(p.Diff()) != refDiff {
		t.Errorf("Diff() = %q, want the commit's diff", p.Diff())
	}
	// A materialized patch is returned as it is.
	if q, err := Materialize(p, []byte("whatever")); err != nil || q != p {
		t.Errorf("Materialize(materialized) = %v, %v; want it unchanged", q, err)
	}

	changed := strings.Replace(refDiff, "+hello world", "+hello there", 1)
	_, err = Materialize(ref, []byte(changed))
	var ie *diag.InputError
	if !errors.As(err, &ie) || ie.File != ref.Path || ie.Line != ref.Reference.PatchIDLine || !strings.Contains(err.Error(), "no longer the diff of upstream commit "+refCommit) {
		t.Errorf("Materialize(other diff) = %v, want an InputError on the Patch-Id line", err)
	}
	if _, err := Materialize(ref, nil); !diag.IsInput(err) {
		t.Errorf("Materialize(no diff) = %v, want an InputError", err)
	}
}

func TestFormatReferenceRejects(t *testing.T) {
	pid := refPatchID(t)
	for _, h := range []ReferenceHeader{
		{Commit: "635da9c", PatchID: pid},
		{Commit: refCommit, PatchID: "x"},
		{Fields: []string{"Subject: two\nlines"}, Commit: refCommit, PatchID: pid},
	} {
		if _, err := FormatReference(h); err == nil {
			t.Errorf("FormatReference(%+v) = nil error", h)
		}
	}
}

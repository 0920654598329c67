package report

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/status"
)

// textOnly is a result with a text form only.
type textOnly struct{}

func (textOnly) Command() string { return "demo" }
func (textOnly) Text() string    { return "hello\n" }

func TestExportRefusesAFormatBeforeWriting(t *testing.T) {
	tests := []struct {
		f       Format
		want    string
		wantErr string
	}{
		{Text, "hello\n", ""},
		{JSON, "{}\n", ""},
		{Markdown, "", "demo: -o markdown is not supported; use text or json"},
		{GitHub, "", "demo: -o github is not supported; use text or json"},
		{HTML, "", "demo: -o html is not supported; use text or json"},
	}
	for _, tt := range tests {
		t.Run(string(tt.f), func(t *testing.T) {
			var b bytes.Buffer
			err := Export(&b, tt.f, textOnly{})
			if b.String() != tt.want {
				t.Errorf("Export(%s) wrote %q, want %q", tt.f, b.String(), tt.want)
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Errorf("Export(%s) = %v", tt.f, err)
				}
				return
			}
			var ue *diag.UsageError
			if !errors.As(err, &ue) || err.Error() != tt.wantErr {
				t.Errorf("Export(%s) = %#v, want the usage error %q (exit 2)", tt.f, err, tt.wantErr)
			}
			if cerr := CheckFormat(tt.f, textOnly{}); cerr == nil || cerr.Error() != tt.wantErr {
				t.Errorf("CheckFormat(%s) = %v, want %q", tt.f, cerr, tt.wantErr)
			}
		})
	}
}

func TestCheckFormats(t *testing.T) {
	if err := CheckFormats("x", JSON, Text, JSON); err != nil {
		t.Errorf("CheckFormats(json of text, json) = %v", err)
	}
	err := CheckFormats("refresh", GitHub, Text, JSON, Markdown)
	if err == nil || err.Error() != "refresh: -o github is not supported; use text, json or markdown" {
		t.Errorf("CheckFormats = %v", err)
	}
	if err := CheckFormats("x", Markdown, JSON); err == nil || err.Error() != "x: -o markdown is not supported; use json" {
		t.Errorf("CheckFormats(one format) = %v", err)
	}
}

// TestEveryResultHasEveryFormat: each command's result renders text,
// json, markdown and github, so -o never falls back to another format.
func TestEveryResultHasEveryFormat(t *testing.T) {
	all := []Format{Text, JSON, Markdown, GitHub}
	results := []Result{ApplyRun{}, ObsoleteRun{}, BuildRun{}, GateRun{}, StampRun{}, VerifyRun{}, Backport{},
		Upgrade{}, UpToDate{}, Refresh{}, Forward{}, InitRun{}, Error{}, Status{}}
	for _, r := range results {
		want := all
		if _, ok := r.(Status); ok {
			want = append(slices.Clone(all), HTML)
		}
		if got := Formats(r); !slices.Equal(got, want) {
			t.Errorf("Formats(%s) = %v, want %v", r.Command(), got, want)
		}
	}
	if err := CheckFormat(HTML, Status{&status.Report{}}); err != nil {
		t.Errorf("status -o html: %v", err)
	}
	if err := CheckFormat(HTML, Upgrade{}); err == nil {
		t.Error("upgrade -o html was not refused")
	}
}

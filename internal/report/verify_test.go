package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/verify"
)

const secret = "ghp_SecretThatMustNotShow42"

func verifyResults() []verify.Result {
	return []verify.Result{{
		Image: "img",
		OK:    false,
		Checks: []verify.Check{
			{Patch: "patches/img/0001-a.diff", Check: "apply", Status: "pass", Message: "applies to v1.0.0"},
			{Patch: "patches/img/0001-a.diff", Check: "backport", Status: "fail", Line: 2,
				Message: "differs from upstream 0123456789ab: a, b | c\nonly in the backport (x):\n  a.txt\n    +x ``` " + secret},
			{Patch: "patches/img/0001-a.diff", Check: "test", Status: "skip", Message: "no Test field"},
			{Patch: "patches/img/0002-b.diff", Check: "header", Status: "warn", Line: 3, Message: "Origin: vendor without Forwarded: 100%"},
		},
	}}
}

func TestRenderVerify(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", secret)
	tests := []struct {
		format Format
		want   []string
		not    []string
	}{
		{format: Text, want: []string{
			"img: FAILED (1 pass, 1 fail, 1 warn, 1 skip)\n  patches/img/0001-a.diff\n    pass apply            applies to v1.0.0\n    FAIL backport         line 2: differs from upstream 0123456789ab: a, b | c\n                           only in the backport (x):\n                             a.txt\n",
			"  patches/img/0002-b.diff\n    warn header           line 3: Origin: vendor without Forwarded: 100%\n",
		}, not: []string{"no Test field"}},
		{format: Markdown, want: []string{
			"### ❌ patchkit verify `img`\n\n| patch | check | status | message |\n|---|---|---|---|\n",
			"| `patches/img/0001-a.diff:2` | backport | ❌ fail | differs from upstream 0123456789ab: a, b \\| c |\n",
			"| `patches/img/0002-b.diff:3` | header | ⚠️ warn | Origin: vendor without Forwarded: 100% |\n",
			"<details><summary><code>patches/img/0001-a.diff</code> backport: differs from upstream 0123456789ab: a, b | c</summary>\n\n````\nonly in the backport (x):\n",
			"1 pass, 1 fail, 1 warn, 1 skip.\n",
		}},
		{format: GitHub, want: []string{
			"::error file=patches/img/0001-a.diff,line=2,title=patchkit verify backport::differs from upstream 0123456789ab: a, b | c%0Aonly in the backport (x):%0A  a.txt%0A    +x ``` ***\n",
			"::warning file=patches/img/0002-b.diff,line=3,title=patchkit verify header::Origin: vendor without Forwarded: 100%25\n",
		}, not: []string{"::notice"}},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if err := RenderVerify(&b, tt.format, verifyResults(), true); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s output =\n%s\nwant it to contain\n%s", tt.format, out, w)
			}
		}
		for _, n := range append(tt.not, secret) {
			if strings.Contains(out, n) {
				t.Errorf("%s output shows %q:\n%s", tt.format, n, out)
			}
		}
	}
}

func TestRenderVerifyJSON(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", secret)
	ok := verify.Result{Image: "other", OK: true, Checks: nil}
	for _, tt := range []struct {
		results []verify.Result
		single  bool
		array   bool
	}{
		{results: verifyResults(), single: true},
		{results: append(verifyResults(), ok), array: true},
		{results: nil, array: true},
	} {
		var b bytes.Buffer
		if err := RenderVerify(&b, JSON, tt.results, tt.single); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), secret) {
			t.Errorf("JSON shows the token:\n%s", b.String())
		}
		if !tt.array {
			var v struct {
				Image  string
				OK     bool `json:"ok"`
				Checks []map[string]any
			}
			if err := json.Unmarshal(b.Bytes(), &v); err != nil || v.Image != "img" || v.OK || len(v.Checks) != 4 {
				t.Fatalf("JSON = %v, %+v\n%s", err, v, b.String())
			}
			c := v.Checks[1]
			if c["patch"] != "patches/img/0001-a.diff" || c["check"] != "backport" || c["status"] != "fail" || c["line"] != 2.0 ||
				!strings.HasPrefix(c["message"].(string), "differs") {
				t.Errorf("check = %v", c)
			}
			if _, has := v.Checks[0]["line"]; has {
				t.Errorf("a check without a line has a line field: %v", v.Checks[0])
			}
			continue
		}
		var arr []map[string]any
		if err := json.Unmarshal(b.Bytes(), &arr); err != nil || len(arr) != len(tt.results) {
			t.Fatalf("JSON array = %v, %d items\n%s", err, len(arr), b.String())
		}
		for _, r := range arr {
			if r["checks"] == nil {
				t.Errorf("checks is null, want []: %s", b.String())
			}
		}
	}
}

func TestRenderVerifyAllPass(t *testing.T) {
	r := []verify.Result{{Image: "img", OK: true, Checks: []verify.Check{{Patch: "p", Check: "apply", Status: "pass", Message: "applies"}}}}
	var md, gh bytes.Buffer
	VerifySummary(&md, r)
	RenderVerify(&gh, GitHub, r, true)
	if md.String() != "### ✅ patchkit verify `img`\n\nAll checks pass (1 pass).\n\n" {
		t.Errorf("markdown = %q", md.String())
	}
	if gh.String() != "::notice title=patchkit verify::img: 1 pass\n" {
		t.Errorf("github = %q", gh.String())
	}
}

func TestRenderBackport(t *testing.T) {
	r := Backport{Image: "img", Commit: "0123456789abcdef0123456789abcdef01234567", Subject: "fix it", File: "patches/img/0002-fix-it.diff",
		PatchID: "fedcba9876543210fedcba9876543210fedcba98", Written: true, Ref: "v1.0.0",
		Errors: []apply.Problem{{Kind: "conflict", File: "patches/img/0002-fix-it.diff", Line: 12, Path: "a.txt", Message: "patch does not apply"}}}
	tests := []struct {
		format Format
		want   string
	}{
		{Text, "img: wrote backport patches/img/0002-fix-it.diff of upstream 0123456789ab (fix it)\n  patch-id fedcba9876543210fedcba9876543210fedcba98; does not apply to v1.0.0\n    patches/img/0002-fix-it.diff:12: a.txt: patch does not apply\n"},
		{GitHub, "::error file=patches/img/0002-fix-it.diff,title=patchkit backport::wrote backport patches/img/0002-fix-it.diff of upstream 0123456789ab (fix it); does not apply to v1.0.0\n::error file=patches/img/0002-fix-it.diff,line=12,title=patchkit backport conflict::patch does not apply\n"},
		{Markdown, "### ❌ patchkit backport `img`\n\nWrote backport patches/img/0002-fix-it.diff of upstream 0123456789ab (fix it): `fedcba9876543210fedcba9876543210fedcba98`, does not apply to v1.0.0.\n- `patches/img/0002-fix-it.diff:12` patch does not apply\n\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if err := RenderBackport(&b, tt.format, r); err != nil {
			t.Fatal(err)
		}
		if b.String() != tt.want {
			t.Errorf("%s =\n%q\nwant\n%q", tt.format, b.String(), tt.want)
		}
	}
	var b bytes.Buffer
	r.Reference, r.Written, r.Applies, r.Errors = true, true, true, nil
	RenderBackport(&b, JSON, r)
	var v map[string]any
	if err := json.Unmarshal(b.Bytes(), &v); err != nil || v["reference"] != true || v["applies"] != true || v["file"] != r.File || v["errors"] == nil {
		t.Errorf("JSON = %v %v\n%s", err, v, b.String())
	}
}

package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/gomod"
	"github.com/patchkit/patchkit/internal/obsolete"
)

const (
	commitA = "aaaaaaaaaaaabbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	commitB = "cccccccccccc0000000000000000000000000000"
)

// sampleReport has three patches over refs v1.0.1..v1.0.n (semver), a tag
// that is not a version, and a branch.
func sampleReport(n int) *obsolete.Report {
	r := &obsolete.Report{URL: "https://user:secret@example.com/up.git", Pin: "v1.0.0", PinCommit: commitB}
	for i := 1; i <= n; i++ {
		r.Refs = append(r.Refs, obsolete.Ref{Name: fmt.Sprintf("v1.0.%d", i), Kind: obsolete.KindTag, Commit: commitB})
	}
	r.Refs = append(r.Refs,
		obsolete.Ref{Name: "nightly", Kind: obsolete.KindTag, Commit: commitB, NonSemver: true},
		obsolete.Ref{Name: "main", Kind: obsolete.KindBranch, Commit: commitB})
	conflict := &apply.Problem{Kind: apply.KindConflict, File: "patches/x/0003.diff", Line: 9, Path: "c.txt",
		Message: "hunk #1 does not apply: none of its 3 context and removed lines is in c.txt", Hunk: "@@ -4,3 +4,3 @@"}
	mk := func(file string, status func(k int) obsolete.Result) obsolete.PatchReport {
		p := obsolete.PatchReport{File: file}
		for k, ref := range r.Refs {
			res := status(k)
			res.Ref = ref.Name
			p.Results = append(p.Results, res)
		}
		return p
	}
	applies := obsolete.Result{Status: obsolete.StatusApplies, Via: obsolete.ViaApply, Evidence: "applies cleanly",
		Offsets: []apply.HunkResult{{Path: "a.txt", Hunk: "@@ -1,3 +1,3 @@", Offset: 0}}}
	r.Patches = []obsolete.PatchReport{
		mk("patches/x/0001.diff", func(k int) obsolete.Result {
			if k >= 2 {
				return obsolete.Result{Status: obsolete.StatusPresent, Via: obsolete.ViaPatchID, Commit: commitA, Subject: "fix it",
					Evidence: `upstream commit aaaaaaaaaaaa ("fix it") has the same patch-id`}
			}
			return applies
		}),
		mk("patches/x/0002.diff", func(k int) obsolete.Result {
			if k%2 == 1 {
				return obsolete.Result{Status: obsolete.StatusPartial, Via: obsolete.ViaHunks,
					Hunks:    []obsolete.Hunk{{Path: "b.txt", Hunk: "@@ -1 +1 @@", Line: 7, Status: obsolete.StatusPresent}, {Path: "b.txt", Hunk: "@@ -9 +9 @@", Line: 12, Status: obsolete.StatusApplies}},
					Evidence: "hunks already upstream: b.txt @@ -1 +1 @@ (line 7); hunks that still apply: b.txt @@ -9 +9 @@ (line 12)"}
			}
			return applies
		}),
		mk("patches/x/0003.diff", func(k int) obsolete.Result {
			return obsolete.Result{Status: obsolete.StatusConflict, Via: obsolete.ViaApply, Conflict: conflict,
				Evidence: conflict.Message + " (patch line 9)"}
		}),
	}
	r.Patches[0].ObsoletedBy, r.Patches[0].Commit = "v1.0.3", commitA
	return r
}

func render(t *testing.T, f Format, results []Obsolete, single bool) string {
	t.Helper()
	var b bytes.Buffer
	if err := RenderObsolete(&b, f, results, single); err != nil {
		t.Fatalf("RenderObsolete(%s) = %v", f, err)
	}
	return b.String()
}

func TestRenderObsoleteText(t *testing.T) {
	got := render(t, Text, []Obsolete{{Image: "x", Report: sampleReport(3)}}, true)
	want := `x: 3 patches against https://***@example.com/up.git, pinned at v1.0.0 (cccccccccccc); 5 refs scanned
  PATCH                v1.0.1    v1.0.2    v1.0.3    nightly*  main      OBSOLETED BY
  patches/x/0001.diff  applies   applies   present   present   present   v1.0.3 (aaaaaaaaaaaa)
  patches/x/0002.diff  applies   partial   applies   partial   applies   -
  patches/x/0003.diff  conflict  conflict  conflict  conflict  conflict  -
  * not a semantic version: ordered by commit date, after the versions

  patches/x/0001.diff
    v1.0.3..main: present: upstream commit aaaaaaaaaaaa ("fix it") has the same patch-id
  patches/x/0002.diff
    v1.0.2: partial: hunks already upstream: b.txt @@ -1 +1 @@ (line 7); hunks that still apply: b.txt @@ -9 +9 @@ (line 12)
    v1.0.3: applies: applies cleanly
    nightly: partial: hunks already upstream: b.txt @@ -1 +1 @@ (line 7); hunks that still apply: b.txt @@ -9 +9 @@ (line 12)
    main: applies: applies cleanly
  patches/x/0003.diff
    v1.0.1..main: conflict
      patches/x/0003.diff:9: hunk #1 does not apply: none of its 3 context and removed lines is in c.txt
        @@ -4,3 +4,3 @@
`
	if got != want {
		t.Errorf("text =\n%s\nwant\n%s", got, want)
	}
}

func TestRenderObsoleteTextManyRefs(t *testing.T) {
	got := render(t, Text, []Obsolete{{Image: "x", Report: sampleReport(12)}}, true)
	for _, want := range []string{
		"  #1  patches/x/0001.diff  obsoleted by v1.0.3 (aaaaaaaaaaaa)\n",
		"  REF       #1       #2       #3\n",
		"  v1.0.1    applies  applies  conflict\n",
		"  v1.0.12   present  partial  conflict\n",
		"  nightly*  present  applies  conflict\n",
		"  main      present  partial  conflict\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("text lacks %q:\n%s", want, got)
		}
	}
}

func TestRenderObsoleteGroupsRefs(t *testing.T) {
	r := sampleReport(6)
	// Make every patch the same at v1.0.3..v1.0.6.
	for k := 2; k < 6; k++ {
		r.Patches[1].Results[k] = r.Patches[1].Results[0]
		r.Patches[1].Results[k].Ref = r.Refs[k].Name
	}
	got := render(t, Markdown, []Obsolete{{Image: "x", Report: r}}, true)
	if want := "| patch | `v1.0.1` | `v1.0.2` | `v1.0.3..v1.0.6 (4)` | `nightly*` | `main` | first obsoleting release | evidence |"; !strings.Contains(got, want) {
		t.Errorf("markdown lacks %q:\n%s", want, got)
	}
	if want := "| `patches/x/0001.diff` | applies | applies | 🟢 **present** | 🟢 **present** | 🟢 **present** | `v1.0.3` (`aaaaaaaaaaaa`) | upstream commit aaaaaaaaaaaa (\"fix it\") has the same patch-id |"; !strings.Contains(got, want) {
		t.Errorf("markdown lacks %q:\n%s", want, got)
	}
	if want := "| `patches/x/0003.diff` | 🔴 **conflict** |"; !strings.Contains(got, want) {
		t.Errorf("markdown lacks %q:\n%s", want, got)
	}
}

func TestRenderObsoleteGitHub(t *testing.T) {
	got := render(t, GitHub, []Obsolete{{Image: "x", Report: sampleReport(3),
		Written: []obsolete.Written{{File: "patches/x/0001.diff", AppliedUpstream: "v1.0.3"}}}}, true)
	want := []string{
		"::warning file=patches/x/0001.diff,line=1,title=patchkit obsolete-check%3A obsolete::patches/x/0001.diff is present in upstream v1.0.3 (aaaaaaaaaaaa)",
		"::warning file=patches/x/0002.diff,line=7,title=patchkit obsolete-check%3A partial::patches/x/0002.diff is partly upstream at v1.0.2",
		"::error file=patches/x/0003.diff,line=9,title=patchkit obsolete-check%3A conflict::patches/x/0003.diff no longer applies to upstream v1.0.1: hunk #1 does not apply",
		"::notice title=patchkit obsolete-check::x: 3 patches, 5 refs scanned: 1 obsoleted by a release, 1 partly upstream, 1 in conflict\n",
		"::notice file=patches/x/0001.diff,line=1,title=patchkit obsolete-check::wrote Applied-Upstream: v1.0.3\n",
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("github lacks %q:\n%s", w, got)
		}
	}
	if n := strings.Count(got, "::error "); n != 1 {
		t.Errorf("%d ::error annotations, want 1 per patch and status", n)
	}
}

func TestRenderObsoleteJSON(t *testing.T) {
	tests := []struct {
		name   string
		items  []Obsolete
		single bool
		array  bool
	}{
		{name: "one image", items: []Obsolete{{Image: "x", Report: sampleReport(1)}}, single: true},
		{name: "all images", items: []Obsolete{{Image: "x", Report: sampleReport(1)}, {Image: "y", Report: sampleReport(1)}}, array: true},
		{name: "no image", items: nil, array: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render(t, JSON, tt.items, tt.single)
			if tt.array != strings.HasPrefix(got, "[") {
				t.Fatalf("JSON = %s, want an array: %v", got, tt.array)
			}
			if strings.Contains(got, "secret") {
				t.Errorf("JSON holds the URL's credentials:\n%s", got)
			}
			if !tt.single {
				return
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(got), &v); err != nil {
				t.Fatal(err)
			}
			patches := v["patches"].([]any)
			p1, p2 := patches[0].(map[string]any), patches[1].(map[string]any)
			if p1["obsoletedBy"] != "v1.0.3" || p1["commit"] != commitA || p2["obsoletedBy"] != nil || p2["commit"] != nil {
				t.Errorf("obsoletedBy, commit = %v %v, %v %v; want v1.0.3 %s, null null", p1["obsoletedBy"], p1["commit"], p2["obsoletedBy"], p2["commit"], commitA)
			}
			res := p1["results"].([]any)[0].(map[string]any)
			for _, k := range []string{"ref", "status", "commit", "evidence"} {
				if _, ok := res[k]; !ok {
					t.Errorf("result lacks %q: %v", k, res)
				}
			}
			if res["commit"] != nil {
				t.Errorf("commit of an applying result = %v, want null", res["commit"])
			}
			if _, ok := v["written"]; ok {
				t.Errorf("JSON has written without --write")
			}
		})
	}
}

// TestRenderObsoleteSkippedAndPrerelease: the skipped release tags are said
// in every format, one line per reason, and the first prerelease that
// carried a change is shown beside the first final release.
func TestRenderObsoleteSkippedAndPrerelease(t *testing.T) {
	r := sampleReport(3)
	r.Skipped = []obsolete.Skipped{
		{Ref: "v0.9.0", Reason: "the pin contains it"},
		{Ref: "v0.9.1", Reason: "the pin contains it"},
		{Ref: "v0.8.5", Reason: "older than v0.9.1, the latest release the pin contains, and does not contain the pin"},
	}
	r.Patches[0].ObsoletedByPrerelease = "v1.0.3-rc.1"
	r.Patches[1].ObsoletedByPrerelease = "v1.0.4-rc.1"
	items := []Obsolete{{Image: "x", Report: r}}
	lines := []string{
		"skipped 2 release tags (the pin contains it): v0.9.0, v0.9.1",
		"skipped 1 release tag (older than v0.9.1, the latest release the pin contains, and does not contain the pin): v0.8.5",
	}
	for _, f := range []Format{Text, Markdown} {
		got := render(t, f, items, true)
		for _, want := range append(lines, "first in prerelease ", "no final release yet; prerelease ") {
			if !strings.Contains(got, want) {
				t.Errorf("%s output lacks %q:\n%s", f, want, got)
			}
		}
	}
	if got := render(t, Text, items, true); !strings.Contains(got, "v1.0.3 (aaaaaaaaaaaa), first in prerelease v1.0.3-rc.1") {
		t.Errorf("text lacks the prerelease beside v1.0.3:\n%s", got)
	}
	var v struct {
		Skipped []obsolete.Skipped `json:"skipped"`
		Patches []struct {
			ObsoletedBy *string `json:"obsoletedBy"`
			Prerelease  string  `json:"obsoletedByPrerelease"`
		} `json:"patches"`
	}
	if err := json.Unmarshal([]byte(render(t, JSON, items, true)), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Skipped) != 3 || v.Skipped[2].Ref != "v0.8.5" || !strings.HasPrefix(v.Skipped[2].Reason, "older than v0.9.1") {
		t.Errorf("skipped = %+v, want the three tags with their reasons", v.Skipped)
	}
	if p := v.Patches; *p[0].ObsoletedBy != "v1.0.3" || p[0].Prerelease != "v1.0.3-rc.1" || p[1].ObsoletedBy != nil || p[1].Prerelease != "v1.0.4-rc.1" {
		t.Errorf("patches = %+v, want v1.0.3 with v1.0.3-rc.1, and none with v1.0.4-rc.1", p)
	}
}

// TestRenderObsoleteJSONBump: a bump patch's result carries its version
// verdict (bump) and a mixed patch's its code part (code).
func TestRenderObsoleteJSONBump(t *testing.T) {
	r := sampleReport(1)
	res := &r.Patches[1].Results[0]
	res.Status, res.Via = obsolete.StatusPartial, obsolete.ViaVersions
	res.Bump = &obsolete.BumpPart{Status: obsolete.StatusPresent, Commit: commitA, Modules: []obsolete.ModuleVerdict{
		{Coverage: gomod.Coverage{Want: gomod.Want{File: "go.mod", Path: "golang.org/x/net", From: "v0.52.0", Version: "v0.53.0"}, Upstream: "v0.54.0", Covered: true}, Commit: commitA},
	}}
	res.Code = &obsolete.CodePart{Status: obsolete.StatusApplies, Via: obsolete.ViaApply, Evidence: "applies cleanly"}
	got := render(t, JSON, []Obsolete{{Image: "x", Report: r}}, true)
	var v struct {
		Patches []struct {
			Results []struct {
				Bump *struct {
					Status  string `json:"status"`
					Modules []struct {
						Module, From, Version, Upstream, Commit string
						Covered                                 bool
					} `json:"modules"`
				} `json:"bump"`
				Code *struct{ Status string } `json:"code"`
			} `json:"results"`
		} `json:"patches"`
	}
	if err := json.Unmarshal([]byte(got), &v); err != nil {
		t.Fatal(err)
	}
	b := v.Patches[1].Results[0].Bump
	if b == nil || b.Status != "present" || len(b.Modules) != 1 || v.Patches[1].Results[0].Code == nil || v.Patches[1].Results[0].Code.Status != "applies" {
		t.Fatalf("bump, code = %+v, %+v\n%s", b, v.Patches[1].Results[0].Code, got)
	}
	m := b.Modules[0]
	if m.Module != "golang.org/x/net" || m.From != "v0.52.0" || m.Version != "v0.53.0" || m.Upstream != "v0.54.0" || !m.Covered || m.Commit != commitA {
		t.Errorf("module = %+v", m)
	}
	if v.Patches[0].Results[0].Bump != nil || v.Patches[0].Results[0].Code != nil {
		t.Errorf("a patch that is no bump has bump or code in JSON")
	}
}

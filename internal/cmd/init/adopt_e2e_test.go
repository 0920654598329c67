package initcmd_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// adoptRepo generates mkadopt.sh's repository (cozystack's shape with the
// version in four places, an abbreviated commit pin, unbuilt units, an
// upstream no mirror holds, a README of provenance) and the git config that
// maps https://github.com/ to its mirror.
func adoptRepo(t *testing.T) (root, cache string) {
	t.Helper()
	return mirrored(t, "mkadopt.sh")
}

func read(t *testing.T, root, p string) string {
	t.Helper()
	return gittest.ReadFile(t, root, p)
}

// TestAdoptWithoutGlue is issue 22's end to end: init, matrix, verify,
// obsolete-check and upgrade run on a repository of cozystack's shape with
// no hand-written glue, and each problem the issue names is handled.
func TestAdoptWithoutGlue(t *testing.T) {
	root, cache := adoptRepo(t)
	pk := func(args ...string) (int, string, string) {
		return run(t, append([]string{"--root", root, "--cache-dir", cache}, args...)...)
	}
	code, out, errOut := pk("-o", "json", "init")
	if code != 1 {
		t.Fatalf("init = %d, want 1 (cloud-provider is unreadable)\n%s%s", code, out, errOut)
	}
	var units []struct {
		Dir      string
		Status   string
		Upstream struct{ URL, Ref string }
		Versions []struct{ File, Kind, Name, Spelling string }
	}
	if err := json.Unmarshal([]byte(out), &units); err != nil {
		t.Fatal(err)
	}
	const kubeovn = "packages/system/kubeovn/images/kubeovn"
	for _, u := range units {
		switch u.Dir {
		case "packages/system/objectstorage/images/cosi":
			if u.Status != "written" || len(u.Upstream.Ref) != 7 {
				t.Errorf("cosi = %+v, want written with its 7-digit pin", u)
			}
		case kubeovn:
			var got []string
			for _, v := range u.Versions {
				got = append(got, v.File+" "+v.Kind+" "+v.Name+" "+v.Spelling)
			}
			want := []string{
				kubeovn + "/Dockerfile dockerfile-arg VERSION bare",
				"packages/system/kubeovn/charts/kube-ovn/Chart.yaml key .version pin",
				"packages/system/kubeovn/charts/kube-ovn/Chart.yaml key .appVersion bare",
				"packages/system/kubeovn/charts/kube-ovn/values.yaml key .global.images.kubeovn.tag pin",
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("kubeovn versions =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
	}
	if s := read(t, root, kubeovn+"/patchkit.yaml"); !strings.Contains(s, "releases: v1.15.*  # the tags obsolete-check scans: the release filter of packages/system/kubeovn/Makefile:22") {
		t.Errorf("kubeovn spec: want the Makefile's release filter\n%s", s)
	}
	if s := read(t, root, "packages/system/objectstorage/images/cosi/patchkit.yaml"); !strings.Contains(s, "branches: [HEAD]") {
		t.Errorf("cosi spec: want the default branch scanned\n%s", s)
	}
	if s := read(t, root, "packages/system/linstor/images/linstor-csi/patchkit.yaml"); !strings.Contains(s, "  recount: true") {
		t.Errorf("linstor-csi spec: want patches.recount\n%s", s)
	}

	// matrix: the units that build, the unbuilt ones named, kilo acknowledged;
	// the vendored kube-ovn chart (a chart unit) selects its package.
	code, out, errOut = pk("matrix")
	if code != 1 || strings.TrimSpace(out) != `["packages/system/kamaji/images/kamaji","packages/system/kubeovn","packages/system/kubeovn/images/kubeovn","packages/system/linstor/images/linstor-csi","packages/system/linstor/images/piraeus-server"]` {
		t.Errorf("matrix = %d\n%s%s", code, out, errOut)
	}
	for _, s := range []string{"packages/system/objectstorage/images/cosi: selected by FULL", "packages/system/gone/images/gone: selected by FULL",
		"note: packages/system/kilo/images/kilo is not built (.patchkit.yaml:2: kilo is built by its own release workflow)"} {
		if !strings.Contains(errOut, s) {
			t.Errorf("matrix stderr lacks %q:\n%s", s, errOut)
		}
	}

	// verify: gone fails alone (exit 2), every other unit is verified.
	code, out, errOut = pk("-o", "json", "verify")
	if code != 2 {
		t.Fatalf("verify = %d, want 2 (gone's upstream cannot be fetched)\n%s%s", code, out, errOut)
	}
	var ver []struct {
		Image, Error string
		OK           bool
		Checks       []struct{ Patch, Check, Status, Message string }
	}
	// Seven image units and the kube-ovn chart unit.
	if err := json.Unmarshal([]byte(out), &ver); err != nil || len(ver) != 8 {
		t.Fatalf("verify -o json: %v, %d results\n%s", err, len(ver), out)
	}
	for _, v := range ver {
		for _, c := range v.Checks {
			switch {
			case c.Check == "canonical" && c.Status == "warn":
				t.Errorf("%s: canonical warns on a series patchkit did not write: %s", v.Image, c.Message)
			case c.Check == "header" && c.Status != "pass":
				t.Errorf("%s: header %s: %s", v.Image, c.Status, c.Message)
			case v.Image == "kubeovn" && c.Check == "backport" && strings.HasSuffix(c.Patch, "0001-retries.diff") && !strings.HasPrefix(c.Message, "identical"):
				t.Errorf("kubeovn 0001: the README's commit is compared: %s", c.Message)
			case v.Image == "kubeovn" && c.Check == "versions" && c.Status != "pass":
				t.Errorf("kubeovn versions: %s", c.Message)
			case strings.HasSuffix(v.Image, "charts/kube-ovn") && c.Status != "pass":
				t.Errorf("the kube-ovn chart unit: %s %s: %s", c.Check, c.Status, c.Message)
			case v.Image == "kilo" && c.Check == "unit" && c.Status != "skip":
				t.Errorf("kilo unit: %s %s, want the acknowledged skip", c.Status, c.Message)
			}
		}
		if (v.Image == "gone") != (v.Error != "") {
			t.Errorf("verify %s: error %q", v.Image, v.Error)
		}
	}

	// obsolete-check: gone fails alone; the abbreviated pin resolves.
	code, out, errOut = pk("-o", "json", "obsolete-check")
	if code != 2 {
		t.Fatalf("obsolete-check = %d, want 2\n%s%s", code, out, errOut)
	}
	var obs []struct {
		Image, Error, Pin, PinCommit string
		Refs                         []string
	}
	// Seven image units and the kube-ovn chart unit.
	if err := json.Unmarshal([]byte(out), &obs); err != nil || len(obs) != 8 {
		t.Fatalf("obsolete-check -o json: %v, %d results\n%s", err, len(obs), out)
	}
	for _, o := range obs {
		switch o.Image {
		case "gone":
			if !strings.Contains(o.Error, "github.com/example/gone") {
				t.Errorf("gone: error %q", o.Error)
			}
		case "cosi":
			if len(o.PinCommit) != 40 || !strings.HasPrefix(o.PinCommit, o.Pin) || strings.Join(o.Refs, ",") != "HEAD" {
				t.Errorf("cosi: pin %s (%s), refs %v", o.Pin, o.PinCommit, o.Refs)
			}
		case "kubeovn":
			if strings.Join(o.Refs, ",") != "v1.15.11" {
				t.Errorf("kubeovn refs = %v", o.Refs)
			}
		}
	}

	// A version place that disagrees fails verify's versions check.
	df := read(t, root, kubeovn+"/Dockerfile")
	os.WriteFile(filepath.Join(root, kubeovn, "Dockerfile"), []byte(strings.Replace(df, `ARG VERSION="1.15.10"`, `ARG VERSION="1.15.9"`, 1)), 0o644)
	if code, out, _ := pk("verify", "kubeovn"); code != 1 || !strings.Contains(out, "FAIL versions") {
		t.Errorf("verify with VERSION=1.15.9 = %d\n%s", code, out)
	}
	os.WriteFile(filepath.Join(root, kubeovn, "Dockerfile"), []byte(df), 0o644)

	// upgrade moves every place in one change and keeps the README true.
	if code, out, errOut := pk("upgrade", "kubeovn"); code != 0 {
		t.Fatalf("upgrade = %d\n%s%s", code, out, errOut)
	}
	for file, want := range map[string][]string{
		kubeovn + "/Dockerfile":                               {`ARG VERSION="1.15.11"`, `ARG TAG="v1.15.11"`},
		"packages/system/kubeovn/charts/kube-ovn/Chart.yaml":  {"version: v1.15.11\n", `appVersion: "1.15.11"`},
		"packages/system/kubeovn/charts/kube-ovn/values.yaml": {"tag: v1.15.11\n"},
	} {
		got := read(t, root, file)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("after upgrade, %s lacks %q:\n%s", file, w, got)
			}
		}
	}
	if readme := read(t, root, kubeovn+"/patches/README.md"); strings.Contains(readme, "0001-retries.diff") || !strings.Contains(readme, "0002-timeout.diff") {
		t.Errorf("after upgrade, the README still lists the dropped patch:\n%s", readme)
	}
	if code, out, _ := pk("verify", "kubeovn"); code != 0 {
		t.Errorf("verify after upgrade = %d\n%s", code, out)
	}
}

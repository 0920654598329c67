package initcmd_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/cmd/root"
	"github.com/patchkit/patchkit/internal/cmdutil"
)

// monorepo generates the cozystack-shaped fixture (internal/adopt/testdata)
// and a git config that maps https://github.com/ to its mirror, the only
// place the upstreams exist.
func monorepo(t *testing.T) (root, cache string) {
	t.Helper()
	dir := t.TempDir()
	root, mirror := filepath.Join(dir, "repo"), filepath.Join(dir, "mirror")
	script, err := filepath.Abs("../../adopt/testdata/mkmonorepo.sh")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("sh", script, root, mirror).CombinedOutput(); err != nil {
		t.Fatalf("mkmonorepo.sh: %v\n%s", err, out)
	}
	cfg := filepath.Join(dir, "gitconfig")
	if err := os.WriteFile(cfg, []byte("[url \"file://"+mirror+"/\"]\n\tinsteadOf = https://github.com/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", cfg)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	return root, filepath.Join(dir, "cache")
}

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := &cmdutil.Factory{IO: cmdutil.Test(&out, &errOut)}
	cmd := root.NewCmdRoot(f)
	cmd.SetArgs(args)
	err := cmd.Execute()
	if err != nil && cmdutil.ExitCode(err) != cmdutil.ExitFindings {
		errOut.WriteString("patchkit: " + err.Error() + "\n")
	}
	return cmdutil.ExitCode(err), out.String(), errOut.String()
}

type initUnit struct {
	Dir      string `json:"dir"`
	Spec     string `json:"spec"`
	Upstream struct {
		URL, Ref string
	} `json:"upstream"`
	Patches string   `json:"patches"`
	Status  string   `json:"status"`
	Problem string   `json:"problem"`
	Notes   []string `json:"notes"`
}

// TestInitAdoptsMonorepo is the adoption end to end: init writes a spec for
// every unit with a readable upstream, lists the one it cannot read, and
// apply --check, obsolete-check and verify then run on every unit through
// the insteadOf mirror, with no --upstream-url and no hand edits.
func TestInitAdoptsMonorepo(t *testing.T) {
	root, cache := monorepo(t)
	code, out, errOut := run(t, "--root", root, "-o", "json", "init")
	if code != 1 {
		t.Fatalf("init exit = %d, want 1 (one unit unreadable)\n%s%s", code, out, errOut)
	}
	var units []initUnit
	if err := json.Unmarshal([]byte(out), &units); err != nil {
		t.Fatalf("init -o json: %v\n%s", err, out)
	}
	kilo, err := exec.Command("git", "-C", filepath.Join(filepath.Dir(root), "mirror/squat/kilo"), "rev-parse", "HEAD~1").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{
		"packages/system/kubeovn/images/kubeovn":         {"https://github.com/kubeovn/kube-ovn", "v1.15.10"},
		"packages/system/linstor/images/piraeus-server":  {"https://github.com/LINBIT/linstor-server.git", "v1.33.3"},
		"packages/system/linstor/images/linstor-csi":     {"https://github.com/piraeusdatastore/linstor-csi", "v1.11.2"},
		"packages/system/kilo/images/kilo":               {"https://github.com/squat/kilo", strings.TrimSpace(string(kilo))},
		"packages/system/kamaji/images/kamaji":           {"https://github.com/clastix/kamaji", "26.3.6-edge"},
		"packages/apps/kubernetes/images/cloud-provider": {"", ""},
	}
	if len(units) != len(want) {
		t.Fatalf("init found %d units, want %d:\n%s", len(units), len(want), out)
	}
	for _, u := range units {
		w, ok := want[u.Dir]
		if !ok {
			t.Errorf("unexpected unit %s", u.Dir)
			continue
		}
		if w[0] == "" {
			if u.Status != "unreadable" || !strings.Contains(u.Problem, "computed by $(shell ...)") || !strings.Contains(u.Problem, "Makefile:1") {
				t.Errorf("%s: status %s, problem %q; want unreadable naming the $(shell) variable and its line", u.Dir, u.Status, u.Problem)
			}
			if _, err := os.Stat(filepath.Join(root, u.Dir, "patchkit.yaml")); err == nil {
				t.Errorf("%s: a spec was written for an unreadable unit", u.Dir)
			}
			continue
		}
		if u.Status != "written" || u.Upstream.URL != w[0] || u.Upstream.Ref != w[1] || u.Patches != u.Dir+"/patches" {
			t.Errorf("%s = %+v, want written, %s at %s", u.Dir, u, w[0], w[1])
		}
	}
	spec, err := os.ReadFile(filepath.Join(root, "packages/system/linstor/images/piraeus-server/patchkit.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"makefile-var: LINSTOR_VERSION", "makefile: ../../Makefile", "prefix: v", "patches: ./patches"} {
		if !strings.Contains(string(spec), s) {
			t.Errorf("piraeus-server spec lacks %q: the pin must point at its source\n%s", s, spec)
		}
	}
	// The yq -i stamps of the recipe that builds kamaji are its stamp entries.
	kamaji, err := os.ReadFile(filepath.Join(root, "packages/system/kamaji/images/kamaji/patchkit.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"  - file: ../../values.yaml  # packages/system/kamaji/Makefile:6\n    key: .kamaji.image.repository\n    format: '{{.Registry}}/kamaji'\n",
		"    key: .kamaji.image.tag\n    format: '{{.Tag}}@{{.Digest}}'\n",
		"    key: .kamaji.extraArgs[0]\n    format: --migrate-image={{.Reference}}\n",
		"image:\n  repository: kamaji  #",
	} {
		if !strings.Contains(string(kamaji), s) {
			t.Errorf("kamaji spec lacks the stamp %q\n%s", s, kamaji)
		}
	}
	// The one it cannot translate is a note with its line.
	for _, u := range units {
		if u.Dir == "packages/system/linstor/images/piraeus-server" &&
			!strings.Contains(strings.Join(u.Notes, "\n"), "packages/system/linstor/Makefile:19: cannot translate this yq line into a stamp entry (the command substitution $$(cat images/piraeus-server.digest))") {
			t.Errorf("piraeus-server notes = %q, want the untranslatable yq line", u.Notes)
		}
	}

	for _, img := range []string{"kubeovn", "piraeus-server", "linstor-csi", "kilo", "kamaji"} {
		if code, out, errOut := run(t, "--root", root, "--cache-dir", cache, "apply", "--check", img); code != 0 {
			t.Errorf("apply --check %s = %d\n%s%s", img, code, out, errOut)
		}
	}
	code, out, errOut = run(t, "--root", root, "--cache-dir", cache, "-o", "json", "obsolete-check")
	if code != 1 {
		t.Fatalf("obsolete-check = %d, want 1 (kubeovn's retries patch is in v1.15.11)\n%s%s", code, out, errOut)
	}
	var obs []struct {
		Image, Unit, Pin string
		Patches          []struct {
			File        string
			ObsoletedBy *string
		}
	}
	if err := json.Unmarshal([]byte(out), &obs); err != nil || len(obs) != 5 {
		t.Fatalf("obsolete-check -o json: %v, %d images\n%s", err, len(obs), out)
	}
	for _, o := range obs {
		for _, p := range o.Patches {
			obsolete := p.ObsoletedBy != nil
			if wantObs := strings.HasSuffix(p.File, "0001-retries.diff"); obsolete != wantObs {
				t.Errorf("%s %s: obsoletedBy %v", o.Image, p.File, p.ObsoletedBy)
			}
		}
		if o.Unit == "" || o.Pin == "" {
			t.Errorf("obsolete-check %s: unit %q pin %q, want both", o.Image, o.Unit, o.Pin)
		}
	}
	code, out, errOut = run(t, "--root", root, "--cache-dir", cache, "-o", "json", "verify")
	if code != 0 {
		t.Fatalf("verify = %d\n%s%s", code, out, errOut)
	}
	var ver []struct {
		Image, Unit, Pin string
		OK               bool
		Checks           []struct{ Check, Status, Message string }
	}
	if err := json.Unmarshal([]byte(out), &ver); err != nil || len(ver) != 5 {
		t.Fatalf("verify -o json: %v, %d images\n%s", err, len(ver), out)
	}
	for _, v := range ver {
		if !v.OK || v.Pin == "" || !strings.HasSuffix(v.Unit, "/"+v.Image) {
			t.Errorf("verify %s: ok %v, unit %q, pin %q", v.Image, v.OK, v.Unit, v.Pin)
		}
	}
}

// TestInitKeepsSpecs checks that init never overwrites a spec without
// --force, and that bad input writes nothing.
func TestInitKeepsSpecs(t *testing.T) {
	root, _ := monorepo(t)
	file := filepath.Join(root, "packages/system/kilo/images/kilo/patchkit.yaml")
	if code, out, errOut := run(t, "--root", root, "init", "packages/system/kilo"); code != 0 {
		t.Fatalf("init packages/system/kilo = %d\n%s%s", code, out, errOut)
	}
	if err := os.WriteFile(file, []byte("# mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := run(t, "--root", root, "init", "packages/system/kilo")
	if got, _ := os.ReadFile(file); code != 0 || string(got) != "# mine\n" || !strings.Contains(out, "exists: left alone") {
		t.Fatalf("init over an existing spec: exit %d, spec %q\n%s", code, got, out)
	}
	if code, _, _ := run(t, "--root", root, "init", "--force", "packages/system/kilo"); code != 0 {
		t.Fatalf("init --force = %d", code)
	}
	if got, _ := os.ReadFile(file); !strings.Contains(string(got), "dockerfile-arg: VERSION") {
		t.Fatalf("init --force did not replace the spec:\n%s", got)
	}
	for _, bad := range []string{"../outside", "packages/nope"} {
		code, _, errOut := run(t, "--root", root, "init", bad)
		if code != 2 || !strings.Contains(errOut, bad) {
			t.Errorf("init %s = %d, %q; want exit 2 naming it", bad, code, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "packages/system/kubeovn/images/kubeovn/patchkit.yaml")); err == nil {
		t.Errorf("init of bad input wrote a spec")
	}
}

package upgrade

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/ghapi"
	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/report"
	"github.com/patchkit/patchkit/internal/txn"
	upgradestage "github.com/patchkit/patchkit/internal/upgrade"
)

const secret = "ghs_SECRETtokenNEVERprinted42"

// TestOpenPR commits the writes on patchkit/upgrade-demo, pushes it to a
// local bare origin and opens the pull request on a fake GitHub; a second
// run updates the same pull request.
func TestOpenPR(t *testing.T) {
	origin := t.TempDir()
	if _, errOut, err := gittest.Run(origin, nil, "init", "-q", "--bare"); err != nil {
		t.Fatal(errOut)
	}
	repo := gittest.New(t)
	repo.Write("images/demo/patchkit.yaml", "ref: v1\n")
	repo.Commit("initial")
	repo.Git("remote", "add", "origin", origin)

	var created, edited int
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+secret {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		var in map[string]any
		json.NewDecoder(r.Body).Decode(&in)
		switch r.Method {
		case "GET":
			if created == 0 {
				w.Write([]byte("[]"))
				return
			}
			w.Write([]byte(`[{"number":7,"head":{"ref":"patchkit/upgrade-demo"}}]`))
		case "POST":
			created++
			bodies = append(bodies, in["body"].(string))
			w.WriteHeader(http.StatusCreated)
			w.Write([]byte(`{"number":7,"html_url":"https://github.test/acme/widget/pull/7"}`))
		case "PATCH":
			edited++
			bodies = append(bodies, in["body"].(string))
			w.Write([]byte(`{"number":7,"html_url":"https://github.test/acme/widget/pull/7"}`))
		}
	}))
	defer srv.Close()
	t.Setenv("GITHUB_REPOSITORY", "acme/widget")
	t.Setenv("GITHUB_TOKEN", secret)
	for _, kv := range gittest.Env() {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") {
			t.Setenv(k, v)
		}
	}

	var errOut bytes.Buffer
	opts := &Options{Factory: &cmdutil.Factory{IO: &cmdutil.IOStreams{ErrOut: &errOut}}, Image: "demo", Base: "main",
		prOpts: prOptions{gh: []ghapi.Option{ghapi.WithBaseURL(srv.URL), ghapi.WithRetries(0)}}}
	for i, ref := range []string{"v2", "v3"} {
		if err := os.WriteFile(filepath.Join(repo.Dir, "images/demo/patchkit.yaml"), []byte("ref: "+ref+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		u := report.Upgrade{Image: "demo", OK: true, Result: &upgradestage.Result{
			Pin:    upgradestage.PinMove{From: "v1", To: ref, File: "images/demo/patchkit.yaml"},
			Writes: []upgradestage.Write{{Path: "images/demo/patchkit.yaml"}},
		}, Written: []txn.Done{{Path: "images/demo/patchkit.yaml", Action: txn.ActionWrite}}}
		if err := openPR(context.Background(), repo.Dir, opts, u); err != nil {
			t.Fatalf("run %d: openPR() = %v", i+1, err)
		}
		got, _, err := gittest.Run(origin, nil, "show", "patchkit/upgrade-demo:images/demo/patchkit.yaml")
		if err != nil || got != "ref: "+ref+"\n" {
			t.Errorf("run %d: origin's branch has %q, %v", i+1, got, err)
		}
		repo.Git("checkout", "-q", "main")
	}
	if created != 1 || edited != 1 {
		t.Errorf("created %d, edited %d pull requests; want 1 and 1", created, edited)
	}
	if len(bodies) != 2 || !strings.Contains(bodies[1], "v1 → v3") {
		t.Errorf("bodies = %q", bodies)
	}
	if strings.Contains(errOut.String(), secret) {
		t.Error("the token was printed")
	}
	if !strings.Contains(errOut.String(), "updated pull request #7") {
		t.Errorf("stderr = %q", errOut.String())
	}
}

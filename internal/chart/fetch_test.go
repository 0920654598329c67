package chart

import (
	"context"
	"testing"

	"github.com/patchkit/patchkit/internal/chart/charttest"
)

// TestFetchHelmRemove: a chart from a Helm repository is unpacked as helm
// pull --untar does (the top directory dropped, dotfiles kept), less the
// paths the Makefile removes after pulling.
func TestFetchHelmRemove(t *testing.T) {
	repo := charttest.NewHelmRepo(t)
	files := charttest.ChartFiles("pg", "0.27.1", "1.28.2")
	files["charts/sub/Chart.yaml"] = "name: sub\n"
	repo.Add(t, "pg", "0.27.1", charttest.Tgz(t, "pg", files))
	u := &Unit{Upstream: Upstream{Helm: repo.URL, Chart: "pg"}, Remove: []string{"charts"}}
	got, err := (&Fetcher{}).Fetch(context.Background(), u, "0.27.1")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got["charts/sub/Chart.yaml"]; ok {
		t.Error("charts/sub/Chart.yaml was not removed")
	}
	for _, p := range []string{"Chart.yaml", ".helmignore", "templates/deployment.yaml"} {
		if string(got[p]) != files[p] {
			t.Errorf("%s = %q, want %q", p, got[p], files[p])
		}
	}
	if _, err := (&Fetcher{}).Fetch(context.Background(), u, "9.9.9"); err == nil {
		t.Error("a version the index lacks was fetched")
	}
	if _, err := (&Fetcher{Offline: true}).Fetch(context.Background(), u, "0.27.1"); err == nil {
		t.Error("--offline fetched from a Helm repository")
	}
}

// TestHelmIndexUnreachableAskedOnce: a Helm repository whose index.yaml
// cannot be read is asked once a run; each of its units gets the same
// error, without waiting on it again.
func TestHelmIndexUnreachableAskedOnce(t *testing.T) {
	repo := charttest.NewHelmRepo(t) // no chart added: no index.yaml, 404
	f := &Fetcher{}
	var errs []error
	for _, chart := range []string{"a", "b"} {
		u := &Unit{Upstream: Upstream{Helm: repo.URL, Chart: chart}}
		_, err := f.Fetch(context.Background(), u, "1.0.0")
		errs = append(errs, err)
	}
	if errs[0] == nil || errs[1] == nil || errs[0].Error() != errs[1].Error() {
		t.Errorf("Fetch() errors = %v, want the index's error for both units", errs)
	}
	if n := repo.Requests(); n != 1 {
		t.Errorf("the repository was asked %d times, want 1", n)
	}
}

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

package status_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// TestStatusBrowser opens the page in headless Chromium (hack/install-deps.sh
// installs it) and reads back the DOM it rendered: the tables and the SVG
// chart are there as the browser parsed them, the title too, and the server
// text that tried to load an image is text.
func TestStatusBrowser(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("the page test needs headless Chromium: run hack/install-deps.sh (%v)", err)
	}
	f := newFixture(t)
	f.serve(t)
	code, out, errOut := f.run(t, "status", "-o", "html")
	if code != 0 {
		t.Fatalf("status -o html = exit %d\n%s%s", code, out, errOut)
	}
	page := filepath.Join(t.TempDir(), "status.html")
	if err := os.WriteFile(page, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--user-data-dir="+t.TempDir(), "--dump-dom", "file://"+page)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v\n%s", err, stderr.String())
	}
	doc, err := html.Parse(strings.NewReader(string(dom)))
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	var series, titles []string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			count[n.Data]++
			if n.Data == "path" && attr(n, "class") == "series" {
				series = append(series, attr(n, "data-unit"))
			}
			if n.Data == "title" && n.FirstChild != nil {
				titles = append(titles, n.FirstChild.Data)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if count["table"] != 3 || count["svg"] != 1 || count["img"] != 0 || count["script"] != 0 {
		t.Errorf("rendered DOM: %d tables, %d svg, %d img, %d script; want 3, 1, 0, 0", count["table"], count["svg"], count["img"], count["script"])
	}
	if got, want := strings.Join(series, ","), "total,images/app,images/other"; got != want {
		t.Errorf("rendered chart series = %s, want %s", got, want)
	}
	if len(titles) == 0 || titles[0] != "patchkit: carried patches" {
		t.Errorf("rendered titles = %q", titles)
	}
	if !strings.Contains(string(dom), "&lt;img src=https://evil.example/q.png&gt;") {
		t.Errorf("the PR title's <img> is not text in the rendered DOM")
	}
}

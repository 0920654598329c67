package charttest

import (
	"fmt"
	"net"
	"path/filepath"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// Mixed is a monorepo of image and chart units where one of each kind
// cannot be reached, for the runs over every unit:
//
//	images/good                   an image unit on a generated git upstream (v1.0.0, v1.1.0), one patch
//	images/gone                   an image unit whose upstream directory was removed
//	packages/app/charts/up        a chart unit of a Helm repository served on loopback (1.0.0, 1.1.0)
//	packages/app/charts/down      a chart unit of a Helm repository on a closed loopback port
type Mixed struct {
	Root string
	Helm *HelmRepo
	// Down is the unreachable Helm repository's URL; Gone the removed
	// upstream's.
	Down, Gone string
}

// Mixed's units, as the commands name them.
const (
	MixedGood = "good"
	MixedGone = "gone"
	MixedUp   = "packages/app/charts/up"
	MixedDown = "packages/app/charts/down"
)

// NewMixed builds the repository and its upstreams.
func NewMixed(tb testing.TB) *Mixed {
	tb.Helper()
	m := &Mixed{Root: tb.TempDir(), Helm: NewHelmRepo(tb)}
	for _, v := range []string{"1.0.0", "1.1.0"} {
		m.Helm.Add(tb, "up", v, Tgz(tb, "up", ChartFiles("up", v, "v"+v)))
	}
	// A closed port: connections to it are refused at once.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	m.Down = "http://" + l.Addr().String() + "/charts"
	l.Close()
	m.Gone = "file://" + filepath.Join(tb.TempDir(), "removed")

	up := gittest.New(tb)
	greet := gittest.Numbered("line%d", 10)
	up.Write("greet.txt", greet)
	up.Commit("initial")
	up.Tag("v1.0.0")
	up.Write("greet.txt", "top\n"+greet)
	up.Release("greet: a line on top", "v1.1.0")

	patch := `Subject: greet: say hello
Origin: vendor
Forwarded: not-needed

--- a/greet.txt
+++ b/greet.txt
@@ -4,3 +4,4 @@
 line4
+hello
 line5
 line6
`
	unit := func(url string) string {
		return fmt.Sprintf("upstream:\n  url: %s\n  ref: v1.0.0\n  releases: \"v1.*\"\npatches: ./patches\n", url)
	}
	files := map[string]string{
		"images/good/patchkit.yaml":           unit(up.URL()),
		"images/good/patches/0001-hello.diff": patch,
		"images/gone/patchkit.yaml":           unit(m.Gone),
		"images/gone/patches/0001-hello.diff": patch,
		"packages/app/patchkit-charts.yaml": fmt.Sprintf(`charts:
  - dir: ./charts/up
    upstream: {helm: %s, chart: up}
    version: {value: 1.0.0}
  - dir: ./charts/down
    upstream: {helm: %s, chart: down}
    version: {value: 1.0.0}
`, m.Helm.URL, m.Down),
	}
	for k, v := range ChartFiles("up", "1.0.0", "v1.0.0") {
		files["packages/app/charts/up/"+k] = v
	}
	for k, v := range ChartFiles("down", "1.0.0", "v1.0.0") {
		files["packages/app/charts/down/"+k] = v
	}
	WriteFiles(tb, m.Root, files)
	return m
}

package obsolete

import (
	"fmt"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/series"
)

const unitsPatch = `Subject: three files

diff --git a/x.txt b/x.txt
--- a/x.txt
+++ b/x.txt
@@ -1,3 +1,3 @@
-x1
+X1
 x2
 x3
@@ -8,3 +8,3 @@ x7
 x8
-x9
+X9
 x10
diff --git a/n.txt b/n.txt
new file mode 100644
--- /dev/null
+++ b/n.txt
@@ -0,0 +1 @@
+new
diff --git a/e.txt b/e.txt
--- a/e.txt
+++ b/e.txt
@@ -1,2 +1,2 @@
 e1
-e2
\ No newline at end of file
+E2
\ No newline at end of file
`

func TestSplitUnits(t *testing.T) {
	p, err := series.Parse("patches/x/0001.diff", []byte(unitsPatch))
	if err != nil {
		t.Fatal(err)
	}
	us := splitUnits(p)
	var got []string
	for _, u := range us {
		got = append(got, fmt.Sprintf("%s:%d:%s", u.path, u.line, u.hunk))
		if len(u.patch.Files) != 1 {
			t.Errorf("unit %s:%d has %d file diffs, want 1", u.path, u.line, len(u.patch.Files))
		}
	}
	want := "x.txt:6:@@ -1,3 +1,3 @@ x.txt:11:@@ -8,3 +8,3 @@ x7 n.txt:16: e.txt:25:@@ -1,2 +1,2 @@"
	if strings.Join(got, " ") != want {
		t.Errorf("splitUnits() = %q, want %q", strings.Join(got, " "), want)
	}
	if last := us[len(us)-1].patch; !strings.HasSuffix(string(last.Bytes()), "+E2\n\\ No newline at end of file\n") {
		t.Errorf("last unit = %q, want it to end with its no-newline marker", last.Bytes())
	}

	single, err := series.Parse("patches/x/0002.diff", []byte("diff --git a/n.txt b/n.txt\nnew file mode 100644\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+new\n"))
	if err != nil {
		t.Fatal(err)
	}
	if us := splitUnits(single); len(us) != 1 || us[0].path != "n.txt" || us[0].line != 1 {
		t.Errorf("splitUnits(one unit) = %+v, want the one file diff, at line 1", us)
	}
}

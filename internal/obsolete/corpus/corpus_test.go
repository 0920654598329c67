package corpus

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func block(key, data string) string { return fmt.Sprintf("%s %d\n%s\n", key, len(data), data) }

const snapDiff = `diff --git a/a.txt b/a.txt
new file mode 100644
index 0000000000000000000000000000000000000000..8ba4b2a2f6b6f8ef85aa28a4e2e8c0be1b1e1f3a
--- /dev/null
+++ b/a.txt
@@ -0,0 +1,2 @@
+one
+two
`

const editDiff = `diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -1,2 +1,2 @@
 one
-two
+three
`

func history() string {
	ident := "A U Thor <a@example.com> 1700000000 +0200"
	return "node 1 snapshot\nreal 1111111111111111111111111111111111111111\n" +
		"author " + ident + "\ncommitter " + ident + "\npatch-id -\nother-paths no\n" +
		block("message", "base\n") + block("diff", snapDiff) +
		"node 2 commit\nreal 2222222222222222222222222222222222222222\nparents 1\n" +
		"author " + ident + "\ncommitter " + ident + "\npatch-id -\nother-paths yes\n" +
		block("message", "edit\n\nbody\n") + block("diff", editDiff) +
		"node 3 ref\nreal 3333333333333333333333333333333333333333\nparents 2\n" +
		"author " + ident + "\ncommitter " + ident + "\npatch-id -\nother-paths no\n" +
		block("message", "tag\n") + block("diff", "")
}

func TestReadHistoryAndBuild(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history")
	if err := os.WriteFile(path, []byte(history()), 0o644); err != nil {
		t.Fatal(err)
	}
	nodes, err := ReadHistory(path)
	if err != nil {
		t.Fatalf("ReadHistory() = %v", err)
	}
	if len(nodes) != 3 || !nodes[1].OtherPaths || nodes[2].Kind != KindRef || nodes[1].Message != "edit\n\nbody\n" {
		t.Fatalf("ReadHistory() = %+v", nodes)
	}
	gitDir := filepath.Join(t.TempDir(), "r.git")
	ids, err := Build(context.Background(), gitDir, nodes)
	if err != nil {
		t.Fatalf("Build() = %v", err)
	}
	show := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"--git-dir=" + gitDir}, args...)...).Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return string(out)
	}
	if got := show("show", ids[2]+":a.txt"); got != "one\nthree\n" {
		t.Errorf("a.txt at node 2 = %q, want one/three", got)
	}
	if got := show("show", ids[2]+":"+OtherPathsFile); got != nodes[1].Real+"\n" {
		t.Errorf("%s at node 2 = %q, want the real id", OtherPathsFile, got)
	}
	if got := show("log", "-1", "--format=%an|%ae|%at|%s", ids[2]); got != "A U Thor|a@example.com|1700000000|edit\n" {
		t.Errorf("node 2 = %q", got)
	}
	if got := show("rev-parse", ids[3]+"^{tree}"); got != show("rev-parse", ids[2]+"^{tree}") {
		t.Errorf("the ref node's tree differs from its parent's")
	}
	// The build is deterministic: same ids again.
	again, err := Build(context.Background(), filepath.Join(t.TempDir(), "s.git"), nodes)
	if err != nil || strings.Join(again, ",") != strings.Join(ids, ",") {
		t.Errorf("Build() again = %v, %v; want %v", again, err, ids)
	}
}

func TestReadHistoryBad(t *testing.T) {
	for name, text := range map[string]string{
		"bad head":     "nod 1 commit\n",
		"out of order": "node 2 commit\n",
		"short block":  "node 1 snapshot\nmessage 10\nabc\n",
		"bad parent":   "node 1 commit\nparents 1\n",
		"unknown key":  "node 1 commit\ncolour blue\n",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "history")
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadHistory(path)
			if err == nil || !strings.Contains(err.Error(), path+":") {
				t.Errorf("ReadHistory(%q) = %v, want an error naming %s:LINE", text, err, path)
			}
		})
	}
}

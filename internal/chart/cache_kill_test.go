package chart

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/patchkit/patchkit/internal/upstream"
)

// killChild, set in a re-executed test binary's environment, makes it fetch
// the asset URL it names into the cache it names, and stop (print "at
// <path>" and wait to be killed) just before renaming the cache file whose
// directory is the one named.
const killChild = "PATCHKIT_TEST_CHART_KILL_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(killChild); spec != "" {
		os.Exit(runKillChild(spec))
	}
	os.Exit(m.Run())
}

// runKillChild runs "CACHE|URL|STOPDIR".
func runKillChild(spec string) int {
	parts := strings.Split(spec, "|")
	cache, assetURL, stopDir := parts[0], parts[1], parts[2]
	testHookBeforeRename = func(path string) {
		if filepath.Base(filepath.Dir(path)) == stopDir {
			fmt.Printf("at %s\n", path)
			select {} // killed here
		}
	}
	u := &Unit{Dir: "templates", Upstream: Upstream{URL: assetURL}}
	if _, err := NewFetcher(os.TempDir(), cache, false).Fetch(context.Background(), u, "1.0.0"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

// TestChartCacheKilledWrite: a run killed with SIGKILL while writing the
// chart cache (its blob whole but not renamed, or its blob in place and
// the entry not renamed) leaves no entry: --offline then finds nothing
// (not a damaged cache, not a half-written chart), and the next online
// run fetches it and keeps it.
func TestChartCacheKilledWrite(t *testing.T) {
	fx := newCacheFixture(t)
	u := fx.units[KindURL]
	ctx := context.Background()
	for _, stop := range []string{"blobs", "entries"} {
		t.Run("before the "+stop+" rename", func(t *testing.T) {
			cache := filepath.Join(t.TempDir(), "cache")
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), killChild+"="+cache+"|"+u.Upstream.URL+"|"+stop)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil || !strings.HasPrefix(line, "at ") {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("the child did not reach the rename: %q %v\n%s", line, err, stderr.String())
			}
			cmd.Process.Kill() // SIGKILL
			cmd.Wait()
			tmps, _ := filepath.Glob(filepath.Join(cache, "charts", stop, ".tmp-*"))
			if len(tmps) != 1 {
				t.Fatalf("the child left temporary files %v, want the one it was killed over", tmps)
			}
			if entries, _ := filepath.Glob(filepath.Join(cache, "charts", "entries", "*.json")); len(entries) != 0 {
				t.Fatalf("a killed write left entries %v", entries)
			}
			_, err = NewFetcher(t.TempDir(), cache, true).Fetch(ctx, u, "1.0.0")
			if !errors.Is(err, ErrOffline) || errors.Is(err, upstream.ErrCacheDamaged) {
				t.Fatalf("offline Fetch after the kill: %v; want not cached", err)
			}
			// The killed writer's file, once old enough, is removed by the
			// next write; a fresh one (another run's, still writing) is kept.
			old := time.Now().Add(-2 * staleTemp)
			if err := os.Chtimes(tmps[0], old, old); err != nil {
				t.Fatal(err)
			}
			fresh := filepath.Join(cache, "charts", stop, ".tmp-other-run")
			os.WriteFile(fresh, []byte("half"), 0o644)
			got, err := NewFetcher(t.TempDir(), cache, false).Fetch(ctx, u, "1.0.0")
			if err != nil || !reflect.DeepEqual(got, fx.files[KindURL]) {
				t.Fatalf("online Fetch after the kill: %v %v", err, fileNames(got))
			}
			if _, err := os.Stat(tmps[0]); !os.IsNotExist(err) {
				t.Errorf("the killed writer's temporary file survived: %v", err)
			}
			if _, err := os.Stat(fresh); err != nil {
				t.Errorf("a fresh temporary file was removed: %v", err)
			}
			if _, err := NewFetcher(t.TempDir(), cache, true).Fetch(ctx, u, "1.0.0"); err != nil {
				t.Fatalf("offline Fetch once fetched again: %v", err)
			}
		})
	}
}

package stamp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	stampstage "github.com/patchkit/patchkit/internal/stamp"
	"github.com/patchkit/patchkit/internal/txn"
)

// TestKilledMigrationIsAllOrNothing: the values file is in a Helm chart
// (shared/Chart.yaml) with the stamp record an earlier version left beside
// it. A stamp moves that record above the chart and deletes it, in the
// same transaction as the stamp. Killed (-9) once its journal is written,
// before and after the journal's commit point, the next patchkit run
// (txn.Recover) leaves either all of it (stamped value, new record with
// the migrated entry, no record in the chart) or none of it.
func TestKilledMigrationIsAllOrNothing(t *testing.T) {
	root := unitRoot(t, map[string]string{"a": "  - {file: shared/values.yaml, key: .image.tag}\n"})
	shared := filepath.Join(root, "shared")
	path := filepath.Join(shared, "values.yaml")
	legacyPath := filepath.Join(shared, stampstage.RecordName)
	newPath := filepath.Join(root, stampstage.RecordName)
	old, stamped := largeValues()
	legacy := `{"version": 1, "stamps": [{"file": "values.yaml", "key": ".c0.image.tag", "value": "v0", "digest": "` + digestN(9) +
		`", "reference": "r", "image": "images/b", "series": "s", "patches": [], "by": "build"}]}` + "\n"
	journal := txn.JournalPath(root)

	for _, when := range []string{"prepare", "commit"} {
		t.Run(when, func(t *testing.T) {
			caught := 0
			for try := 0; try < 20 && caught == 0; try++ {
				os.WriteFile(filepath.Join(shared, "Chart.yaml"), []byte("apiVersion: v2\nname: shared\nversion: 0.1.0\n"), 0o644)
				os.WriteFile(path, []byte(old), 0o644)
				os.WriteFile(legacyPath, []byte(legacy), 0o644)
				os.Remove(newPath)
				c := stampProcess(t, root, "a", digestN(1))
				done := make(chan struct{})
				go func() { c.Wait(); close(done) }()
				deadline := time.Now().Add(2 * time.Minute) // a hang guard only
			poll:
				for time.Now().Before(deadline) {
					select {
					case <-done:
						break poll
					default:
					}
					if j, err := os.ReadFile(journal); err == nil && strings.Contains(string(j), `"state": "`+when+`"`) {
						break
					}
					time.Sleep(100 * time.Microsecond)
				}
				c.Process.Signal(syscall.SIGKILL)
				<-done
				if _, err := os.Stat(journal); err != nil {
					continue // the kill missed the window: try again
				}
				caught++
				rec, err := txn.Recover(context.Background(), root)
				if err != nil || rec == nil {
					t.Fatalf("Recover() = %+v, %v", rec, err)
				}
				got, _ := os.ReadFile(path)
				_, legacyErr := os.Stat(legacyPath)
				newRec, newErr := os.ReadFile(newPath)
				switch {
				case string(got) == old:
					if legacyErr != nil || newErr == nil {
						t.Errorf("rolled back, but the legacy record exists=%v and the new one exists=%v", legacyErr == nil, newErr == nil)
					}
				case string(got) == stamped:
					if legacyErr == nil || newErr != nil || !strings.Contains(string(newRec), `"shared/values.yaml"`) ||
						!strings.Contains(string(newRec), digestN(9)) || !strings.Contains(string(newRec), digestN(1)) {
						t.Errorf("rolled forward, but the legacy record exists=%v and the new one is %s", legacyErr == nil, newRec)
					}
				default:
					t.Fatalf("after kill -9 and recovery the values file is neither old nor stamped (%d bytes)", len(got))
				}
				if when == "commit" && !rec.Forward {
					t.Errorf("a kill after the commit point was undone, want completed")
				}
				left, _ := filepath.Glob(filepath.Join(shared, ".*.tmp-*"))
				if len(left) > 0 {
					t.Errorf("temporary files left after recovery: %v", left)
				}
			}
			if caught == 0 {
				t.Fatalf("no kill landed in the %s window in 20 tries", when)
			}
		})
	}
}

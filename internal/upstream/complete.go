package upstream

import (
	"os"
	"path/filepath"
)

// Complete reports, without opening the cache, whether dir holds a cache of
// url with its history: there, not partial (see WithShallow), and not left
// half-written by an interrupted run. It is the cheap question a caller
// asks before Open when only a partial or missing cache interests it
// (pipeline.Peek): Open reads the pack index and checks HEAD.
func Complete(dir, url string) bool {
	abs, err := filepath.Abs(dir)
	if err != nil || dir == "" {
		return false
	}
	c := &Cache{dir: abs, key: cacheKey(url)}
	if _, err := os.Lstat(c.Path()); err != nil {
		return false
	}
	if _, err := os.Lstat(c.markerPath()); err == nil {
		return false
	}
	return !isPartial(c.Path())
}

package upstream

import "path/filepath"

// CachePath is the path of the cache Open opens for url under dir, without
// opening it: two URLs that share a cache (the same one with and without
// credentials) have the same path. It is "" when dir has no absolute path.
func CachePath(dir, url string) string {
	abs, err := filepath.Abs(dir)
	if err != nil || dir == "" {
		return ""
	}
	return (&Cache{dir: abs, key: cacheKey(url)}).Path()
}

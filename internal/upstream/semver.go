package upstream

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Releases returns the tags whose names match pattern (path.Match syntax, as
// in the spec's releases: "v1.15.*") and are semantic versions (an optional
// "v", MAJOR.MINOR.PATCH, optional -prerelease and +build), in ascending
// semver order. Tags that are not semantic versions are left out.
func Releases(tags []Tag, pattern string) ([]Tag, error) {
	if _, err := path.Match(pattern, ""); err != nil {
		return nil, fmt.Errorf("release pattern %q: %w", pattern, err)
	}
	type release struct {
		tag Tag
		v   semver
	}
	var out []release
	for _, t := range tags {
		if ok, _ := path.Match(pattern, t.Name); !ok {
			continue
		}
		if v, ok := parseSemver(t.Name); ok {
			out = append(out, release{t, v})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if c := out[i].v.compare(out[j].v); c != 0 {
			return c < 0
		}
		return out[i].tag.Name < out[j].tag.Name
	})
	res := make([]Tag, len(out))
	for i, r := range out {
		res[i] = r.tag
	}
	return res, nil
}

// CompareVersions compares two tag names as semantic versions: -1, 0 or +1.
// ok is false when either is not a semantic version.
func CompareVersions(a, b string) (cmp int, ok bool) {
	va, okA := parseSemver(a)
	vb, okB := parseSemver(b)
	if !okA || !okB {
		return 0, false
	}
	return va.compare(vb), true
}

type semver struct {
	core [3]uint64
	pre  []string
}

func parseSemver(s string) (semver, bool) {
	var v semver
	s = strings.TrimPrefix(s, "v")
	if i := strings.IndexByte(s, '+'); i >= 0 {
		if !validIdents(s[i+1:], false) {
			return v, false
		}
		s = s[:i]
	}
	if i := strings.IndexByte(s, '-'); i >= 0 {
		if !validIdents(s[i+1:], true) {
			return v, false
		}
		v.pre = strings.Split(s[i+1:], ".")
		s = s[:i]
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return v, false
	}
	for i, p := range parts {
		if !isNumeric(p) || len(p) > 1 && p[0] == '0' {
			return v, false
		}
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return v, false
		}
		v.core[i] = n
	}
	return v, true
}

// validIdents checks dot-separated identifiers; numeric prerelease
// identifiers may not have leading zeros.
func validIdents(s string, pre bool) bool {
	if s == "" {
		return false
	}
	for _, id := range strings.Split(s, ".") {
		if id == "" {
			return false
		}
		for _, r := range id {
			if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-') {
				return false
			}
		}
		if pre && isNumeric(id) && len(id) > 1 && id[0] == '0' {
			return false
		}
	}
	return true
}

func isNumeric(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// compare follows semver 2.0 precedence: a prerelease sorts before its
// release; numeric identifiers compare as numbers and before alphanumeric
// ones; a shorter identifier list sorts first when all else is equal.
func (a semver) compare(b semver) int {
	for i := range a.core {
		if a.core[i] != b.core[i] {
			if a.core[i] < b.core[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a.pre) == 0 && len(b.pre) == 0:
		return 0
	case len(a.pre) == 0:
		return 1
	case len(b.pre) == 0:
		return -1
	}
	for i := 0; i < len(a.pre) && i < len(b.pre); i++ {
		x, y := a.pre[i], b.pre[i]
		xn, yn := isNumeric(x), isNumeric(y)
		switch {
		case xn && yn:
			nx, _ := strconv.ParseUint(x, 10, 64)
			ny, _ := strconv.ParseUint(y, 10, 64)
			if nx != ny {
				if nx < ny {
					return -1
				}
				return 1
			}
		case xn:
			return -1
		case yn:
			return 1
		case x != y:
			if x < y {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a.pre) < len(b.pre):
		return -1
	case len(a.pre) > len(b.pre):
		return 1
	}
	return 0
}

// MinorLine is the major.minor line of a semantic version, as the name
// spells it: "v1.14" for v1.14.3. ok is false when it is no semantic version.
func MinorLine(name string) (line string, ok bool) {
	v, ok := parseSemver(name)
	if !ok {
		return "", false
	}
	prefix := ""
	if strings.HasPrefix(name, "v") {
		prefix = "v"
	}
	return fmt.Sprintf("%s%d.%d", prefix, v.core[0], v.core[1]), true
}

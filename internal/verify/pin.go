package verify

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/patchkit/patchkit/internal/adopt"
	"github.com/patchkit/patchkit/internal/spec"
)

// The checks of the spec against the unit's Dockerfile.
const (
	// CheckPin: the upstream and pin the Dockerfile's build uses (its ARG
	// defaults, the Makefile's build-args and variables) are the spec's.
	CheckPin = "pin"
	// CheckDockerfile: a build.context unit Dockerfile applies the series
	// the way patchkit does: the same directory, the whole glob, one git
	// apply.
	CheckDockerfile = "dockerfile"
)

// DockerfileChecks compares the spec with the Dockerfile of its unit
// (build.dockerfile, else the unit's Dockerfile or Containerfile). A unit
// without one, or whose Dockerfile fetches nothing, gets no checks.
func DockerfileChecks(root string, s *spec.Spec) []Check {
	file := s.Build.Dockerfile
	if file == "" {
		for _, name := range []string{"Dockerfile", "Containerfile"} {
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(s.Dir), name)); err == nil {
				file = path.Join(s.Dir, name)
				break
			}
		}
	}
	if file == "" {
		return nil
	}
	u, ok := adopt.Inspect(root, file)
	if !ok {
		if s.Build.Context == spec.ContextUnit {
			return []Check{{Patch: s.File, Check: CheckDockerfile, Status: StatusWarn, Line: s.Line("build.context"),
				Message: fmt.Sprintf("build.context is unit, but %s applies no patch directory", file)}}
		}
		return nil
	}
	var out []Check
	out = append(out, pinCheck(s, file, u))
	if s.Build.Context == spec.ContextUnit {
		out = append(out, applyCheck(s, file, u))
	}
	return out
}

func pinCheck(s *spec.Spec, file string, u adopt.Unit) Check {
	c := Check{Patch: s.File, Check: CheckPin, Line: s.Line("upstream.ref")}
	if u.Status == adopt.StatusUnreadable && u.Upstream.Ref == "" {
		c.Status, c.Message = StatusWarn, "cannot read the pin "+file+" builds: "+u.Problem
		return c
	}
	from := "copied into the spec"
	if src := s.Upstream.RefFrom; src != nil {
		from = "read from " + src.Where()
	}
	if u.Upstream.Ref != s.Upstream.Ref {
		c.Status = StatusFail
		c.Message = fmt.Sprintf("the spec pins %s (%s), but %s builds %s (%s): make them one", s.Upstream.Ref, from, file, u.Upstream.Ref, u.Upstream.From)
		return c
	}
	if sameURL(u.Upstream.URL, s.Upstream.URL) {
		c.Status = StatusPass
		c.Message = fmt.Sprintf("%s (%s) is what %s builds", s.Upstream.Ref, from, file)
		return c
	}
	c.Status, c.Line = StatusFail, s.Line("upstream.url")
	c.Message = fmt.Sprintf("the spec's upstream is %s, but %s fetches %s", s.Upstream.URL, file, u.Upstream.URL)
	return c
}

func sameURL(a, b string) bool {
	norm := func(s string) string { return strings.TrimSuffix(strings.TrimSuffix(s, "/"), ".git") }
	return norm(a) == norm(b)
}

func applyCheck(s *spec.Spec, file string, u adopt.Unit) Check {
	c := Check{Patch: s.File, Check: CheckDockerfile, Status: StatusPass, Line: s.Line("build.context")}
	switch {
	case u.Status == adopt.StatusUnreadable && u.Patches == "":
		c.Status, c.Message = StatusWarn, u.Problem
	case path.Clean(u.Patches) != path.Clean(s.Patches):
		c.Status = StatusWarn
		c.Message = fmt.Sprintf("%s applies %s, but the spec's series is %s: the image would not carry what patchkit checked", file, u.Patches, s.Patches)
	case u.ApplyDiffers != "":
		c.Status = StatusWarn
		c.Message = fmt.Sprintf("%s %s: the image may not carry exactly what patchkit checked", file, u.ApplyDiffers)
	case u.Recount && !s.Series.Recount:
		c.Status = StatusWarn
		c.Message = fmt.Sprintf("%s applies with git apply --recount, but the spec's patches.recount is not set: set it, or drop --recount, so the image carries what patchkit checked", file)
	case !u.Recount && s.Series.Recount:
		c.Status = StatusWarn
		c.Message = fmt.Sprintf("the spec sets patches.recount, but %s applies without --recount: the image may not carry exactly what patchkit checked", file)
	default:
		c.Message = fmt.Sprintf("%s applies %s in one git apply, as patchkit does", file, s.Patches)
	}
	return c
}

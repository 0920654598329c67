package verify

import (
	"fmt"

	"github.com/patchkit/patchkit/internal/matrix"
	"github.com/patchkit/patchkit/internal/spec"
)

// CheckUnit is the check that an image is built: a line of the build entry
// (the root Makefile's build: target, or what .patchkit.yaml names) builds
// it, by the rule the matrix uses (matrix.Entry.BuiltBy). An image with a
// spec that is never built would keep its stamped digest forever.
const CheckUnit = "unit"

// Units checks the images (IMAGE arguments) against the build entry of
// root. It returns the unit check of each image, and, when all is set
// (verify was given no IMAGE), a failed Result for every `make image
// IMAGE=<x>` line whose x is no unit. A repository without the entry's
// Makefile gets a warning on each image: nothing lists what CI builds. A
// unit that no line builds fails, unless .patchkit.yaml's unbuilt: names it
// with a reason: then the check is a skip that gives the reason.
func Units(root string, images []string, all bool) (map[string]Check, []Result, error) {
	repo, err := spec.LoadRepo(root)
	if err != nil {
		return nil, nil, err
	}
	entry, err := matrix.ReadEntry(root, repo)
	if err != nil {
		return nil, nil, err
	}
	checks := make(map[string]Check, len(images))
	for _, arg := range images {
		u, err := spec.Find(root, arg)
		if err != nil {
			return nil, nil, err
		}
		checks[arg] = unitCheck(root, entry, u)
		if c := checks[arg]; c.Status == StatusFail {
			if ack, key, ok := repo.Acknowledged(u.Dir); ok {
				c.Status, c.Line = StatusSkip, 0
				c.Message = fmt.Sprintf("not built: %s (%s:%d)", ack.Reason, spec.RepoFileName, repo.Line(key))
				checks[arg] = c
			}
		}
	}
	if !all {
		return checks, nil, nil
	}
	var orphans []Result
	for _, l := range entry.Lines {
		if l.Image == "" {
			continue // a -C line may build images patchkit does not carry
		}
		if _, err := spec.Find(root, l.Image); err == nil {
			continue
		}
		orphans = append(orphans, Result{Image: l.Image, OK: false, Checks: []Check{{
			Patch: entry.Makefile, Check: CheckUnit, Status: StatusFail, Line: l.N,
			Message: fmt.Sprintf("%s: builds image %s, which is no unit (no %s, and no unit named %s)", entry.Target, l.Image, spec.Path(l.Image), l.Image),
		}}})
	}
	return checks, orphans, nil
}

// unitCheck is the unit check of u.
func unitCheck(root string, entry *matrix.Entry, u spec.Unit) Check {
	c := Check{Patch: u.File(), Check: CheckUnit}
	if b, ok := matrix.BranchBuildOf(root, u.Dir); ok {
		// A release branch of the project Makefile above it: that
		// Makefile is the repository's own build entry for it.
		c.Status = StatusPass
		c.Message = fmt.Sprintf("built by `%s` (%s:%d reads %s/%s)", b.Text(), b.Makefile, b.Line, u.Dir, b.File)
		return c
	}
	if !entry.Exists {
		c.Status = StatusWarn
		c.Message = fmt.Sprintf("no %s: nothing lists this image as a unit that CI builds", entry.Makefile)
		return c
	}
	if l, ok := entry.BuiltBy(u); ok {
		c.Status = StatusPass
		c.Message = fmt.Sprintf("built by `%s` (%s)", l.Text, l.Where(entry))
		return c
	}
	c.Status, c.Line = StatusFail, 1
	c.Message = fmt.Sprintf("%s has a spec, but no line of %s's %s: target builds it, so its stamped digest would silently freeze: add `%s` to %s:",
		u.File(), entry.Makefile, entry.Target, entry.Want(root, u), entry.Target)
	return c
}

package verify

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/patchkit/patchkit/internal/matrix"
	"github.com/patchkit/patchkit/internal/spec"
)

// CheckUnit is the check that an image is built: its spec is a unit of the
// Makefile's build: target, and every unit there has a spec. An image with
// a spec that is never built would keep its stamped digest forever.
const CheckUnit = "unit"

// Units checks the image units of the Makefile at root against the images
// that have a spec. It returns the unit check of each image in images, and,
// when all is set (verify was given no IMAGE), a failed Result for every
// unit of build: that has no spec. A repository without a Makefile gets a
// warning on each image: nothing lists what CI builds.
func Units(root string, images []string, all bool) (map[string]Check, []Result, error) {
	checks := make(map[string]Check, len(images))
	specFile := func(name string) string {
		if u, err := spec.Find(root, name); err == nil {
			return u.File()
		}
		return spec.Path(name)
	}
	makefile := filepath.Join(root, "Makefile")
	if _, err := os.Stat(makefile); errors.Is(err, os.ErrNotExist) {
		for _, name := range images {
			checks[name] = Check{Patch: specFile(name), Check: CheckUnit, Status: StatusWarn,
				Message: "no Makefile: nothing lists this image as a unit that CI builds"}
		}
		return checks, nil, nil
	}
	units, err := matrix.Units(makefile, "Makefile")
	if err != nil {
		return nil, nil, err
	}
	byName := make(map[string]matrix.Unit, len(units))
	for _, u := range units {
		byName[u.Name] = u
	}
	for _, name := range images {
		if u, ok := byName[name]; ok {
			checks[name] = Check{Patch: specFile(name), Check: CheckUnit, Status: StatusPass,
				Message: fmt.Sprintf("built by the Makefile's build: target (Makefile:%d)", u.Line)}
			continue
		}
		checks[name] = Check{Patch: specFile(name), Check: CheckUnit, Status: StatusFail, Line: 1,
			Message: fmt.Sprintf("%s has a spec, but the Makefile's build: target never builds it, so its stamped digest would silently freeze: add `$(MAKE) image IMAGE=%s` to build:", specFile(name), name)}
	}
	var orphans []Result
	if all {
		for _, u := range units {
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(spec.Path(u.Name)))); err == nil {
				continue
			}
			orphans = append(orphans, Result{Image: u.Name, OK: false, Checks: []Check{{
				Patch: "Makefile", Check: CheckUnit, Status: StatusFail, Line: u.Line,
				Message: fmt.Sprintf("build: builds image %s, which has no %s", u.Name, spec.Path(u.Name)),
			}}})
		}
	}
	return checks, orphans, nil
}

package initcmd

import (
	"path"

	"github.com/patchkit/patchkit/internal/adopt"
	"github.com/patchkit/patchkit/internal/chart"
)

// withCharts adds the chart units of the package Makefiles (internal/chart)
// to the image units init found, writing their patchkit-charts.yaml unless
// --dry-run, and lists each, and each line or patch file it could not
// place, as an init entry of kind chart.
func withCharts(root string, opts *Options, units []adopt.Unit) ([]adopt.Unit, error) {
	var imagePatches []string
	for _, u := range units {
		if u.Patches != "" {
			imagePatches = append(imagePatches, u.Patches)
		}
	}
	found, err := chart.Adopt(root, opts.Dirs, imagePatches)
	if err != nil {
		return nil, err
	}
	if err := chart.WriteSpecs(root, found, opts.Force, opts.DryRun); err != nil {
		return nil, err
	}
	for _, f := range found {
		u := adopt.Unit{Kind: "chart", Dir: f.Dir, Spec: f.Spec, Status: f.Status, Problem: f.Problem, Notes: f.Notes}
		if f.Problem != "" {
			u.Status = adopt.StatusUnreadable
			u.Dockerfile = f.Dir
		}
		if f.Unit != nil {
			u.Upstream = adopt.Upstream{URL: f.Unit.URL(), Ref: f.Pin, From: f.From}
			if len(f.Unit.Series.Patches) > 0 {
				u.Patches = path.Join(path.Dir(f.Spec), path.Dir(f.Unit.Series.Patches[0]))
			}
		}
		units = append(units, u)
	}
	return units, nil
}

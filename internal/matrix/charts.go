package matrix

import (
	"path"

	"github.com/patchkit/patchkit/internal/chart"
	"github.com/patchkit/patchkit/internal/spec"
)

// chartUnits are the chart units (internal/chart) as matrix units. Their
// inputs are the vendored directory, the spec, the series, the Makefile
// that holds the pin and the package's Makefile; the `make -C DIR image`
// line whose directory holds the unit builds it, and a selection names it
// by that directory (the package), as cozystack's own matrix does.
func chartUnits(root string, entry *Entry) ([]Unit, error) {
	units, err := chart.LoadAll(root)
	if err != nil {
		return nil, err
	}
	var out []Unit
	for _, cu := range units {
		su := spec.Unit{Name: path.Base(cu.Dir), Dir: cu.Dir}
		u := Unit{Unit: su, Chart: true}
		for _, l := range entry.Lines {
			if l.Dir != "" && l.Builds(su) {
				u.Line, u.Built = l, true
				break
			}
		}
		u.Inputs = append(u.Inputs, cu.Dir, cu.Spec)
		u.Inputs = append(u.Inputs, cu.Series.Patches...)
		if cu.Version.Makefile != "" {
			u.Inputs = append(u.Inputs, cu.Version.Makefile)
		}
		u.Inputs = append(u.Inputs, chart.MakefileInputs(root, makefileOf(root, path.Dir(cu.Spec)))...)
		for i := range u.Inputs {
			u.Inputs[i] = path.Clean(u.Inputs[i])
		}
		out = append(out, u)
	}
	return out, nil
}

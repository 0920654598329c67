package spec

import (
	"sync"
	"sync/atomic"
)

// walks counts Discover's tree walks; a test seam.
var walks atomic.Int64

// Discovery walks a repository's tree for image units (and chart spec
// files) once, the first time
// it is asked, and answers every later question of the same run from that
// walk: a monorepo command over N units walks the tree once, not N+1 times
// (issue 24). A unit added during the run is not seen; one run's commands
// do not add units. Safe for concurrent use.
type Discovery struct {
	root  string
	once  sync.Once
	found walked
}

// NewDiscovery returns the discovery of the units under root; it walks
// nothing yet.
func NewDiscovery(root string) *Discovery { return &Discovery{root: root} }

// Root is the repository root it discovers under.
func (d *Discovery) Root() string { return d.root }

// Units returns every image unit under the root (see Discover), walking the
// tree on the first call only.
func (d *Discovery) Units() ([]Unit, error) {
	d.once.Do(func() { d.found = walk(d.root) })
	return d.found.units, d.found.err
}

// ChartFiles returns the chart spec files (ChartFileName) under the root,
// relative to it, sorted, from the same walk as Units: skipping SkipDirs,
// not nested repositories. A directory the walk could not read is an error
// here (a chart unit is not skipped).
func (d *Discovery) ChartFiles() ([]string, error) {
	d.once.Do(func() { d.found = walk(d.root) })
	if d.found.chartsErr != nil {
		return nil, d.found.chartsErr
	}
	return d.found.charts, nil
}

// List is List(root), from the one walk.
func (d *Discovery) List() ([]string, error) {
	units, err := d.Units()
	if err != nil {
		return nil, err
	}
	return Args(units), nil
}

// Find is Find(root, arg), from the one walk.
func (d *Discovery) Find(arg string) (Unit, error) { return find(d.root, arg, d.Units) }

// Load is Load(root, arg), from the one walk.
func (d *Discovery) Load(arg string) (*Spec, error) {
	u, err := d.Find(arg)
	if err != nil {
		return nil, err
	}
	return LoadUnit(d.root, u)
}

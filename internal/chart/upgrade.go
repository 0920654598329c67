package chart

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/patchkit/patchkit/internal/buildfile"
	"github.com/patchkit/patchkit/internal/txn"
)

// Upgrade is the plan (and, once written, the record) of moving a chart
// unit to another upstream version.
type Upgrade struct {
	Unit     string   `json:"unit"`     // the vendored directory
	From     string   `json:"from"`     // the pin
	To       string   `json:"to"`       // the target version
	Problems []string `json:"problems"` // what the Makefile's tool refuses at To: nothing is written then
	Files    []string `json:"files"`    // vendored files that change
	Pins     []string `json:"pins"`     // the pin sources moved, file:line
	Written  bool     `json:"written"`

	carried // the patches dropped, the other files edited, what else names the version
}

// ErrNoNewer: no release after the pin (a deliberate skip, not a failure).
var ErrNoNewer = fmt.Errorf("no newer upstream release")

// PlanUpgrade works out the move of u to version to (the newest release
// when empty): the directory re-vendored (upstream at to plus the series,
// carried forward as the Makefile applies it) and the pin moved where it
// lives. Nothing is written.
func (f *Fetcher) PlanUpgrade(ctx context.Context, u *Unit, to string) (*Upgrade, Files, error) {
	pin, err := u.Pin(f.root)
	if err != nil {
		return nil, nil, err
	}
	if to == "" {
		vs, err := f.Releases(ctx, u, pin)
		if err != nil {
			return nil, nil, err
		}
		if len(vs) == 0 {
			return nil, nil, ErrNoNewer
		}
		to = vs[len(vs)-1]
	}
	up := &Upgrade{Unit: u.Dir, From: pin, To: to}
	want, problems, dropped, _, err := f.expected(ctx, u, to, true)
	if err != nil {
		return nil, nil, err
	}
	c, dropProblems, err := f.planCarried(u, pin, to, dropped, want)
	if err != nil {
		return nil, nil, err
	}
	up.Problems, up.carried = append(problems, dropProblems...), c
	have, err := ReadDir(f.root, u.Dir)
	if err != nil {
		return nil, nil, err
	}
	if u.Kind() == KindURL {
		for p := range have {
			if _, ok := want[p]; !ok {
				want[p] = have[p] // a release asset's directory keeps its other files
			}
		}
	}
	up.Files = Diff(want, have)
	return up, want, nil
}

// WriteUpgrade is WriteUpgradeContext with no cancellation and no notice
// while it waits for the repository lock.
func (f *Fetcher) WriteUpgrade(u *Unit, up *Upgrade, want Files) error {
	return f.WriteUpgradeContext(context.Background(), u, up, want, txn.Options{})
}

// WriteUpgradeContext writes a plan without problems as one transaction
// (txn: under the repository lock, through a journal the next run
// completes or undoes, refused when a file changed since it was read): the
// vendored directory's files created, rewritten (mode and owner kept) or
// deleted to match want, and the pin moved (a Makefile variable, or the
// spec's literal; a pin read from the vendored Chart.yaml moves with it).
func (f *Fetcher) WriteUpgradeContext(ctx context.Context, u *Unit, up *Upgrade, want Files, o txn.Options) error {
	if len(up.Problems) > 0 {
		return fmt.Errorf("%s: the series does not apply at %s: nothing written", u.Dir, up.To)
	}
	set := txn.New(f.root)
	// Plan the pin edit before writing anything.
	var pinFile string
	var pinData []byte
	v := u.Version
	switch {
	case v.MakefileVar != "":
		pinFile = v.Makefile
		data, line, err := replaceAssignment(f.root, pinFile, v.MakefileVar, v.Prefix+up.From, v.Prefix+up.To)
		if err != nil {
			return err
		}
		pinData = data
		up.Pins = append(up.Pins, fmt.Sprintf("%s:%d", pinFile, line))
	case v.Value != "":
		pinFile = u.Spec
		data, line, err := replaceAssignment(f.root, pinFile, "version", up.From, up.To)
		if err != nil {
			return err
		}
		pinData = data
		up.Pins = append(up.Pins, fmt.Sprintf("%s:%d", pinFile, line))
	default:
		up.Pins = append(up.Pins, fmt.Sprintf("%s (re-vendored)", chartYAMLPath(f.root, u.Dir)))
	}
	up.Pins = append(up.Pins, up.recipePins...)
	have, err := ReadDir(f.root, u.Dir)
	if err != nil {
		return err
	}
	for _, p := range Diff(want, have) {
		rel := path.Join(u.Dir, p)
		old, had := have[p]
		data, keep := want[p]
		switch {
		case !keep:
			set.Delete(rel, old)
		case !had:
			if err := os.MkdirAll(filepath.Join(f.root, filepath.FromSlash(path.Dir(rel))), 0o755); err != nil {
				return err
			}
			set.Create(rel, data)
		default:
			set.Write(rel, data, old)
		}
	}
	// The pin and the planned edits (a dropped patch's file, its series
	// entry and recipe line; a literal pin in the recipe) join the same
	// transaction: each file read once, its edits applied in order.
	if err := addEdits(f.root, set, pinFile, pinData, up.edits); err != nil {
		return err
	}
	if _, err := set.Commit(ctx, o); err != nil {
		return txn.Explain(err)
	}
	up.Written = true
	return nil
}

// replaceAssignment rewrites the one line of root/file that assigns name
// the value old (buildfile.ReplaceValue).
func replaceAssignment(root, file, name, old, new string) ([]byte, int, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
	if err != nil {
		return nil, 0, err
	}
	out, line, err := buildfile.ReplaceValue(data, name, old, new)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", file, err)
	}
	return out, line, nil
}

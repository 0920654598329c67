package verify

import (
	"fmt"
	"strings"

	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/stamp"
)

// CheckStamp is the check that each stamped digest was built from the
// series as it is now, by the stamp record beside the stamped file
// (stamp.RecordName). It reads no registry: it needs no network.
const CheckStamp = "stamp"

// StampChecks gives one stamp check per stamped value of s that carries
// the digest. ids is the series now (series.Idents), nil when a patch of
// it cannot be used. A value with no record, or one changed since its
// stamp, is of unknown provenance (warn); a value stamped from another
// version of the series is stale: warn, or fail where the stamp entry
// says stale: fail.
func StampChecks(root string, s *spec.Spec, ids []series.Ident) []Check {
	if len(s.Stamp) == 0 {
		return nil
	}
	stamped, err := stamp.Inspect(root, s)
	if err != nil {
		return []Check{{Patch: s.File, Check: CheckStamp, Status: StatusFail, Line: s.Line("stamp"),
			Message: "cannot read the stamp targets: " + err.Error()}}
	}
	var out []Check
	for _, st := range stamped {
		if !st.CarriesDigest {
			continue
		}
		out = append(out, stampCheck(s, st, ids))
	}
	return out
}

// stampCheck judges one stamped value.
func stampCheck(s *spec.Spec, st stamp.Stamped, ids []series.Ident) Check {
	entry := fmt.Sprintf("stamp[%d]", st.Entry)
	c := Check{Patch: s.File, Check: CheckStamp, Line: s.Line(entry)}
	where := st.File
	if st.Key != "" {
		where += " " + st.Key
	}
	rec := st.Record
	switch {
	case rec == nil:
		c.Status = StatusWarn
		c.Message = fmt.Sprintf("unknown provenance: %s holds %q, and %s has no record of a patchkit stamp there: "+
			"nothing says which series built it (build it with patchkit build --stamp)", where, st.Value, st.RecordFile)
	case rec.Value != st.Value:
		c.Status = StatusWarn
		c.Message = fmt.Sprintf("unknown provenance: %s holds %q, but patchkit stamped %q there (%s): the value was changed since",
			where, st.Value, rec.Value, st.RecordFile)
	case ids == nil:
		c.Status = StatusSkip
		c.Message = fmt.Sprintf("%s: a patch of the series cannot be used, so it cannot be compared with the one %s was built from", where, rec.Digest)
	case rec.Series == series.Fingerprint(ids):
		c.Status = StatusPass
		c.Message = fmt.Sprintf("%s: %s was built from the series as it is (%d patches)", where, rec.Digest, len(ids))
	default:
		c.Status = StatusWarn
		if s.Stamp[st.Entry].Stale == spec.StaleFail {
			c.Status = StatusFail
		}
		c.Message = fmt.Sprintf("stale: %s holds %s, built from another version of the series; since then: %s\n%s",
			where, rec.Digest, SeriesDiff(rec.Patches, ids).String(), "rebuild and stamp it (patchkit build --stamp)")
		if rec.By == stamp.ByStamp {
			c.Message += "; the record is from patchkit stamp, which names the series in the repository when it stamped"
		}
	}
	return c
}

// Changes is how a series changed: patches added, removed, and changed
// (the same name, another patch-id). A patch renamed with its patch-id
// kept is Renamed, old name => new name.
type Changes struct {
	Added, Removed, Changed, Renamed []string
}

// SeriesDiff compares the series a stamp recorded (was) with the series now.
func SeriesDiff(was, now []series.Ident) Changes {
	var c Changes
	wasByName := map[string]string{}
	for _, p := range was {
		wasByName[p.Name] = p.ID
	}
	nowByName := map[string]string{}
	for _, p := range now {
		nowByName[p.Name] = p.ID
	}
	gone := map[string]string{} // patch-id -> name, of the removed
	for _, p := range was {
		if _, ok := nowByName[p.Name]; !ok {
			gone[p.ID] = p.Name
		}
	}
	for _, p := range now {
		id, ok := wasByName[p.Name]
		switch {
		case ok && id != p.ID:
			c.Changed = append(c.Changed, p.Name)
		case ok:
		case gone[p.ID] != "":
			c.Renamed = append(c.Renamed, gone[p.ID]+" => "+p.Name)
			delete(gone, p.ID)
		default:
			c.Added = append(c.Added, p.Name)
		}
	}
	for _, p := range was {
		if _, ok := gone[p.ID]; ok && gone[p.ID] == p.Name {
			c.Removed = append(c.Removed, p.Name)
		}
	}
	return c
}

// String lists the changes, e.g. "added 0003-x.diff; changed 0001-y.diff".
func (c Changes) String() string {
	var parts []string
	for _, l := range []struct {
		what  string
		names []string
	}{{"added", c.Added}, {"removed", c.Removed}, {"changed", c.Changed}, {"renamed", c.Renamed}} {
		if len(l.names) > 0 {
			parts = append(parts, l.what+" "+strings.Join(l.names, ", "))
		}
	}
	if len(parts) == 0 {
		return "the patches are the same, in another order"
	}
	return strings.Join(parts, "; ")
}

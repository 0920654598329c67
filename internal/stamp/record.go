package stamp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
)

// RecordName is the stamp record: the file that says, for every value
// stamped in the files under its directory, what the digest was built
// from. It is beside the stamped file, or, for a file inside a Helm chart,
// in the directory holding the chart (see recordDir), so that `helm
// package` never packages it. The stamped file itself keeps exactly the
// bytes yq would write.
const RecordName = ".patchkit-stamps.json"

// RecordVersion is the version of the record's format.
const RecordVersion = 1

// Who recorded a stamp (RecordEntry.By).
const (
	// ByBuild: `patchkit build --stamp` built the digest from the series it records.
	ByBuild = "build"
	// ByStamp: `patchkit stamp --digest` wrote a digest it was given; the
	// series recorded is the one in the repository when it stamped.
	ByStamp = "stamp"
)

// Record is the content of a stamp record file.
type Record struct {
	Version int           `json:"version"`
	Stamps  []RecordEntry `json:"stamps"`
}

// RecordEntry is the provenance of one stamped value.
type RecordEntry struct {
	// File is the stamped file's path from the record's directory,
	// slash-separated: its name when the record is beside it; Key is the
	// stamp key as Change.Key has it, "" for a text file.
	File string `json:"file"`
	Key  string `json:"key,omitempty"`
	// Value is what the stamp wrote there.
	Value string `json:"value"`
	// Digest and Reference are the image the value was rendered from.
	Digest    string `json:"digest"`
	Reference string `json:"reference"`
	// Image is the image unit's directory, relative to the root.
	Image string `json:"image"`
	// Series is series.Fingerprint(Patches), the series' content hash
	// (the image's dev.patchkit.series annotation carries the same).
	Series  string         `json:"series"`
	Patches []series.Ident `json:"patches"`
	// By is ByBuild or ByStamp.
	By string `json:"by"`
}

// recordFile is the record of the stamped files under its directory.
type recordFile struct {
	dir    string  // the record's directory, symlinks resolved
	out    *file   // the record itself, as a file to commit
	absent bool    // out does not exist yet
	files  []*file // the stamped files it records
	// legacy are the records earlier versions kept beside stamped files
	// inside a Helm chart: read, merged into out, and deleted in the same
	// transaction. Only those that exist are written (deleted).
	legacy []*file
}

// ChartFile marks a Helm chart directory: `helm package` packages every
// file under it.
const ChartFile = "Chart.yaml"

// recordDir is where the record of the stamped files in dir lives: dir
// itself, unless dir is inside a Helm chart (a directory holding
// ChartFile, up to the root); then the directory holding the outermost
// such chart, which `helm package` does not read. A root that is itself a
// chart keeps the record beside the file (add RecordName to its
// .helmignore).
func recordDir(realRoot, dir string) string {
	if realRoot == "" {
		return dir
	}
	outer := ""
	for d := dir; ; d = filepath.Dir(d) {
		if r, err := filepath.Rel(realRoot, d); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			break
		}
		if st, err := os.Stat(filepath.Join(d, ChartFile)); err == nil && st.Mode().IsRegular() {
			outer = d
		}
		if d == realRoot || d == filepath.Dir(d) {
			break
		}
	}
	if outer == "" || outer == realRoot {
		return dir
	}
	return filepath.Dir(outer)
}

// recordAt is the record file in dir.
func (p *Plan) recordAt(dir string) *file {
	abs := filepath.Join(dir, RecordName)
	rel := abs
	if p.realRoot != "" {
		if rr, err := filepath.Rel(p.realRoot, abs); err == nil {
			rel = filepath.ToSlash(rr)
		}
	}
	return &file{rel: rel, path: abs}
}

// entryName is how r's record names the stamped file f: its path from the
// record's directory, slash-separated (the file's name when beside it).
func (r *recordFile) entryName(f *file) string {
	if rel, err := filepath.Rel(r.dir, f.path); err == nil {
		return filepath.ToSlash(rel)
	}
	return filepath.Base(f.path)
}

// readRecord reads the record at abs (rel names it in errors); a missing
// file is an empty record.
func readRecord(abs, rel string) (*Record, []byte, error) {
	data, err := os.ReadFile(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return &Record{Version: RecordVersion}, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", rel, err)
	}
	var r Record
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, nil, inputErr(rel, 0, "not a stamp record (%v): restore it from version control, or delete it and stamp again", err)
	}
	if r.Version != RecordVersion {
		return nil, nil, inputErr(rel, 0, "stamp record version %d; this patchkit reads version %d", r.Version, RecordVersion)
	}
	return &r, data, nil
}

// Lookup returns the entry of file and key, or nil.
func (r *Record) Lookup(file, key string) *RecordEntry {
	for i := range r.Stamps {
		if r.Stamps[i].File == file && r.Stamps[i].Key == key {
			return &r.Stamps[i]
		}
	}
	return nil
}

// put adds e, replacing the entry of its file and key.
func (r *Record) put(e RecordEntry) {
	if old := r.Lookup(e.File, e.Key); old != nil {
		*old = e
		return
	}
	r.Stamps = append(r.Stamps, e)
}

// encode renders r, its entries sorted by file and key.
func (r *Record) encode() []byte {
	sort.SliceStable(r.Stamps, func(i, j int) bool {
		a, b := r.Stamps[i], r.Stamps[j]
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Key < b.Key
	})
	out, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		panic(err) // strings and slices of strings always marshal
	}
	return append(out, '\n')
}

// records groups the plan's files by the directory of their record (see
// recordDir): one record each.
func (p *Plan) records() []*recordFile {
	byDir := map[string]*recordFile{}
	legacy := map[string]bool{}
	var out []*recordFile
	for _, f := range p.files {
		fdir := filepath.Dir(f.path)
		dir := recordDir(p.realRoot, fdir)
		r := byDir[dir]
		if r == nil {
			r = &recordFile{dir: dir, out: p.recordAt(dir)}
			byDir[dir] = r
			out = append(out, r)
		}
		if fdir != dir && !legacy[fdir] {
			legacy[fdir] = true
			r.legacy = append(r.legacy, p.recordAt(fdir))
		}
		r.files = append(r.files, f)
	}
	return out
}

// update reads the record of r (the repository lock is held), merges into
// it the legacy records beside r's files (an entry already in r's record
// is newer and wins), and puts an entry for every value the plan stamps in
// r's files. It reports whether anything is to be written: the record's
// content changes, or a legacy record is to be deleted.
func (p *Plan) update(r *recordFile) (bool, error) {
	removeStale(r.out.path, p.started)
	rec, old, err := readRecord(r.out.path, r.out.rel)
	if err != nil {
		return false, err
	}
	r.absent = old == nil
	migrate := false
	for _, l := range r.legacy {
		lrec, ldata, err := readRecord(l.path, l.rel)
		if err != nil {
			return false, err
		}
		if ldata == nil {
			continue
		}
		l.old, migrate = ldata, true
		for _, e := range lrec.Stamps {
			name := e.File
			if rel, err := filepath.Rel(r.dir, filepath.Join(filepath.Dir(l.path), filepath.FromSlash(e.File))); err == nil {
				name = filepath.ToSlash(rel)
			}
			if rec.Lookup(name, e.Key) == nil {
				e.File = name
				rec.put(e)
			}
		}
	}
	ids := p.value.Series
	if ids == nil {
		ids = []series.Ident{}
	}
	fp := series.Fingerprint(ids)
	for _, f := range r.files {
		for _, c := range f.changes {
			rec.put(RecordEntry{
				File: r.entryName(f), Key: c.Key, Value: c.New,
				Digest: p.value.Digest, Reference: p.value.Scalar(FormatRef),
				Image: p.spec.Dir, Series: fp, Patches: ids, By: p.value.By,
			})
		}
	}
	r.out.old, r.out.new = old, rec.encode()
	return migrate || !bytes.Equal(r.out.old, r.out.new), nil
}

// Stamped is one stamped value as its file holds it now, with the record
// of the stamp that wrote it.
type Stamped struct {
	// Entry is the index of the spec's stamp entry.
	Entry int
	// File and Key name the value as Change does; Value is what the file
	// holds there now.
	File, Key, Value string
	// CarriesDigest is false for a value the digest does not show in (a
	// template of only {{.Registry}}, {{.Tag}}, {{.Repository}}, or the
	// repository and tag keys of a split mapping).
	CarriesDigest bool
	// RecordFile is the record beside the file (relative to the root);
	// Record its entry for this value, nil when none.
	RecordFile string
	Record     *RecordEntry
}

// probe is a well-formed digest no build makes, to see which values carry one.
var probe = Value{Registry: "registry.invalid", Repository: "probe", Tag: "probe", Digest: "sha256:" + strings.Repeat("0", 64)}

// Inspect reads each stamp target of s under root and the stamp records
// beside them, without locks and without writing. A target stamp cannot
// find (a missing file or key) is an error, as for Prepare.
func Inspect(root string, s *spec.Spec) ([]Stamped, error) {
	p, err := Prepare(root, s, probe)
	if err != nil {
		return nil, err
	}
	var out []Stamped
	for _, r := range p.records() {
		rec, _, err := readRecord(r.out.path, r.out.rel)
		if err != nil {
			return nil, err
		}
		// A record an earlier version left beside the file, inside a chart,
		// is read until the next stamp migrates it.
		legacy := map[string]*Record{}
		legacyRel := map[string]string{}
		for _, l := range r.legacy {
			lrec, ldata, err := readRecord(l.path, l.rel)
			if err != nil {
				return nil, err
			}
			if ldata != nil {
				legacy[filepath.Dir(l.path)], legacyRel[filepath.Dir(l.path)] = lrec, l.rel
			}
		}
		for _, f := range r.files {
			for _, c := range f.changes {
				st := Stamped{
					Entry: entryOf(s, c), File: c.File, Key: c.Key, Value: c.Old,
					CarriesDigest: strings.Contains(c.New, probe.Digest),
					RecordFile:    r.out.rel, Record: rec.Lookup(r.entryName(f), c.Key),
				}
				if l := legacy[filepath.Dir(f.path)]; st.Record == nil && l != nil {
					if e := l.Lookup(filepath.Base(f.path), c.Key); e != nil {
						st.Record, st.RecordFile = e, legacyRel[filepath.Dir(f.path)]
					}
				}
				out = append(out, st)
			}
		}
	}
	return out, nil
}

// entryOf is the index of the stamp entry that writes c.
func entryOf(s *spec.Spec, c Change) int {
	first := -1
	for i, st := range s.Stamp {
		if st.File != c.File {
			continue
		}
		if st.Key == c.Key || st.Format == FormatSplit && strings.HasPrefix(c.Key, st.Key+".") {
			return i
		}
		if first < 0 {
			first = i
		}
	}
	return max(first, 0)
}

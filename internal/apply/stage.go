package apply

import (
	"fmt"
	"sort"

	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/tree"
)

// fnState is what git's fn_table records about a path while one patch is
// checked.
type fnState int

const (
	fnPatched    fnState = iota // an earlier file diff of the patch produced it
	fnToBeDelete                // a file diff of the patch will remove it
	fnWasDeleted                // an earlier file diff of the patch removed it
)

type fnEntry struct {
	state fnState
	fp    *filePatch
}

// stage checks one patch against the Applier's state, as git's
// check_patch_list does, and holds the results until commit.
type stage struct {
	a     *Applier
	p     *series.Patch
	res   *PatchResult
	fps   []*filePatch
	fn    map[string]fnEntry
	kept  map[string]bool // symlinks the patch creates or keeps
	gone  map[string]bool // symlinks the patch removes
	file  string          // the patch file as messages name it
	fatal bool
}

func newStage(a *Applier, p *series.Patch, res *PatchResult) *stage {
	return &stage{
		a: a, p: p, res: res,
		fps:  filePatches(p, a.opts.reverse),
		fn:   map[string]fnEntry{},
		kept: map[string]bool{},
		gone: map[string]bool{},
		file: res.Name,
	}
}

func (s *stage) problem(kind string, fp *filePatch, path, format string, args ...any) {
	s.res.Errors = append(s.res.Errors, Problem{
		Kind: kind, File: s.file, Line: fp.headerLine, Path: path,
		Message: fmt.Sprintf(format, args...),
	})
}

// readErr records that the tree could not be read.
func (s *stage) readErr(fp *filePatch, path string, err error) {
	if s.res.Err == nil {
		s.res.Err = err
	}
	s.problem(KindRead, fp, path, "%v", err)
}

// run checks every file diff of the patch and records the problems.
func (s *stage) run() {
	if len(s.fps) == 0 {
		s.res.Errors = append(s.res.Errors, Problem{
			Kind: KindCorrupt, File: s.file, Message: "no file diffs in patch",
		})
		return
	}
	if !s.a.opts.noWS {
		inOrder := append([]*filePatch(nil), s.fps...)
		sort.Slice(inOrder, func(i, j int) bool { return inOrder[i].index < inOrder[j].index })
		for _, fp := range inOrder {
			if !fp.isBinary {
				s.whitespace(parseWhitespace(fp, s.a.opts.reverse, s.file)...)
			}
		}
	}
	for _, fp := range s.fps {
		if fp.corrupt != "" {
			s.problem(KindCorrupt, fp, fp.name(), "%s", fp.corrupt)
			return
		}
	}
	// prepare_symlink_changes and prepare_fn_table.
	for _, fp := range s.fps {
		if fp.oldName != "" && fp.oldMode&modeTypeMask == modeSymlink && (fp.isRename || fp.isDelete) {
			s.gone[fp.oldName] = true
		}
		if fp.newName != "" && fp.newMode&modeTypeMask == modeSymlink {
			s.kept[fp.newName] = true
		}
	}
	for _, fp := range s.fps {
		if fp.newName == "" || fp.isRename {
			s.fn[fp.oldName] = fnEntry{state: fnToBeDelete}
		}
	}
	for _, fp := range s.fps {
		s.check(fp)
		if s.fatal {
			return
		}
	}
	if len(s.res.Errors) == 0 {
		s.checkLayout()
	}
}

// lookup reads path from the Applier's state.
func (s *stage) lookup(fp *filePatch, path string) (*tree.File, bool) {
	f, ok, err := s.a.Read(path)
	if err != nil {
		s.readErr(fp, path, err)
		return nil, false
	}
	return f, ok
}

// symlinkLeading reports whether a leading directory of path is a symlink in
// the Applier's state (git's has_symlink_leading_path).
func (s *stage) symlinkLeading(fp *filePatch, path string) (string, bool) {
	for i := 0; i < len(path); i++ {
		if path[i] != '/' {
			continue
		}
		dir := path[:i]
		f, ok := s.lookup(fp, dir)
		if ok && f.Mode == tree.Symlink {
			return dir, true
		}
	}
	return "", false
}

// beyondSymlink is git's path_is_beyond_symlink: a leading directory of path
// is a symlink that the patch creates, or one of the state that the patch
// does not remove.
func (s *stage) beyondSymlink(fp *filePatch, path string) bool {
	for i := len(path) - 1; i > 0; i-- {
		if path[i] != '/' {
			continue
		}
		dir := path[:i]
		if s.kept[dir] {
			return true
		}
		if s.gone[dir] {
			continue
		}
		if f, ok := s.lookup(fp, dir); ok && f.Mode == tree.Symlink {
			return true
		}
	}
	return false
}

// previous is git's previous_patch: the earlier file diff of this patch whose
// result a plain modification builds on. gone is set when an earlier file diff
// removed the path.
func (s *stage) previous(fp *filePatch) (prev *filePatch, gone bool) {
	if fp.isCopy || fp.isRename || fp.oldName == "" {
		return nil, false
	}
	e, ok := s.fn[fp.oldName]
	if !ok || e.state == fnToBeDelete {
		return nil, false
	}
	if e.state == fnWasDeleted {
		return nil, true
	}
	return e.fp, false
}

// check is git's check_patch for one file diff; it records at most one
// problem, as git stops at the first error of a file diff.
func (s *stage) check(fp *filePatch) {
	// Safety first: no name may leave the tree, name .git, or be read
	// through a symlink.
	for _, n := range []string{fp.oldName, fp.newName} {
		if n == "" {
			continue
		}
		if err := tree.Clean(n); err != nil {
			s.problem(KindUnsafe, fp, n, "invalid path: %v", err)
			s.fatal = true
			return
		}
	}
	prev, gone := s.previous(fp)
	if fp.oldName != "" && prev == nil && !gone {
		if dir, ok := s.symlinkLeading(fp, fp.oldName); ok {
			s.problem(KindUnsafe, fp, fp.oldName, "reading from '%s' beyond a symbolic link (%s)", fp.oldName, dir)
			return
		}
	}

	cur, ok := s.checkPreimage(fp, prev, gone)
	if !ok {
		return
	}

	// check_to_create
	okIfExists := false
	if e, ok := s.fn[fp.newName]; ok && fp.newName != "" && (e.state == fnWasDeleted || e.state == fnToBeDelete) {
		okIfExists = true
	}
	if fp.newName != "" && (fp.isNew || fp.isRename || fp.isCopy) {
		if !okIfExists {
			if _, leading := s.symlinkLeading(fp, fp.newName); !leading {
				f, ok := s.lookup(fp, fp.newName)
				if s.res.Err != nil {
					return
				}
				if ok && f.Mode == tree.Symlink {
					s.problem(KindUnsafe, fp, fp.newName, "%s: already exists in working directory as a symbolic link", fp.newName)
					return
				}
				if ok {
					s.problem(KindExists, fp, fp.newName, "%s: already exists in working directory", fp.newName)
					return
				}
			}
		}
		if fp.newMode == 0 {
			if fp.isNew {
				fp.newMode = modeRegular
			} else {
				fp.newMode = fp.oldMode
			}
		}
	}
	if fp.newName != "" && fp.oldName != "" {
		if fp.newMode == 0 {
			fp.newMode = fp.oldMode
		}
		if (fp.oldMode^fp.newMode)&modeTypeMask != 0 {
			s.problem(KindCorrupt, fp, fp.newName, "new mode (%o) of %s does not match old mode (%o) of %s",
				fp.newMode, fp.newName, fp.oldMode, fp.oldName)
			return
		}
	}
	if !fp.isDelete && fp.newName != "" && s.beyondSymlink(fp, fp.newName) {
		if s.res.Err == nil {
			s.problem(KindUnsafe, fp, fp.newName, "affected file '%s' is beyond a symbolic link", fp.newName)
		}
		return
	}
	if s.res.Err != nil {
		return
	}

	// apply_data
	var img []byte
	switch {
	case prev != nil:
		img = prev.result
	case cur != nil:
		img = cur.Data
	}
	if fp.oldMode&modeTypeMask == modeGitlink || fp.newMode&modeTypeMask == modeGitlink {
		// git cannot apply a submodule patch without an index: it keeps
		// what is there.
		fp.result = img
	} else if fp.isBinary {
		out, msg := applyBinary(fp, img, s.a.opts.reverse, s.a.opts.maxBinary)
		if msg != "" {
			s.problem(KindBinary, fp, fp.name(), "%s", msg)
			return
		}
		fp.result = out
	} else if !s.applyText(fp, img) {
		return
	}
	fp.applied = true
	if fp.newName != "" {
		s.fn[fp.newName] = fnEntry{state: fnPatched, fp: fp}
	}
	if fp.newName == "" || fp.isRename {
		s.fn[fp.oldName] = fnEntry{state: fnWasDeleted}
	}
	if fp.isDelete && len(fp.result) > 0 {
		s.problem(KindConflict, fp, fp.oldName, "%s: removal patch leaves file contents", fp.oldName)
		return
	}
}

// checkPreimage is git's check_preimage: the file a diff changes must be
// there, of the type the diff expects. It returns the file read from the
// state (nil when an earlier file diff of the patch provides it), and false
// after recording a problem.
func (s *stage) checkPreimage(fp *filePatch, prev *filePatch, gone bool) (*tree.File, bool) {
	if fp.oldName == "" {
		return nil, true
	}
	if gone {
		s.problem(KindMissing, fp, fp.oldName, "path %s has been renamed/deleted", fp.oldName)
		return nil, false
	}
	var cur *tree.File
	var stMode uint32
	if prev != nil {
		stMode = prev.newMode
	} else {
		f, ok := s.lookup(fp, fp.oldName)
		if s.res.Err != nil {
			return nil, false
		}
		if !ok && fp.mayBeNew() {
			// A traditional diff that only adds to a file that is not there
			// creates it, as git decides.
			fp.isNew, fp.oldName = true, ""
			return nil, true
		}
		if !ok {
			s.problem(KindMissing, fp, fp.oldName, "%s: No such file or directory", fp.oldName)
			return nil, false
		}
		cur = f
		stMode = uint32(f.Mode)
	}
	if fp.oldMode == 0 {
		fp.oldMode = stMode
	}
	if (stMode^fp.oldMode)&modeTypeMask != 0 {
		s.problem(KindConflict, fp, fp.oldName, "%s: wrong type (the tree has mode %06o, the patch expects %06o)",
			fp.oldName, stMode, fp.oldMode)
		return nil, false
	}
	// A mode that differs otherwise is only a warning in git.
	if fp.newMode == 0 && !fp.isDelete {
		fp.newMode = stMode
	}
	return cur, true
}

// applyText applies the text hunks of fp to img, recording where they
// applied, or the first hunk that does not apply.
func (s *stage) applyText(fp *filePatch, img []byte) bool {
	if len(fp.frags) == 0 {
		fp.result = img
		return true
	}
	if fr := fp.frags[0]; len(img) == 0 && len(fp.frags) == 1 {
		if pre, _ := fr.counts(); pre == 0 {
			// A new file, or one that was empty: it applies at its start.
			out, expected, eofLine := fillEmpty(fr)
			s.applied(fp, fr, 0, expected, eofLine)
			fp.result = out
			return true
		}
	}
	orig := splitLines(string(img))
	im := newImage(append([]imgLine(nil), orig...))
	for i, fr := range fp.frags {
		applied, expected, eofLine := applyHunk(im, fr)
		fuzz := 0
		if applied < 0 && (s.a.opts.fuzz > 0 || s.a.opts.loose) {
			fuzz, applied, expected, eofLine = applyHunkGNU(im, fr, s.a.opts.fuzz, s.a.opts.loose)
		}
		if applied < 0 {
			s.res.Errors = append(s.res.Errors, conflictProblem(s.file, fp, i+1, fr, orig))
			return false
		}
		s.applied(fp, fr, applied, expected, eofLine)
		s.res.Hunks[len(s.res.Hunks)-1].Fuzz = fuzz
	}
	fp.result = im.bytes()
	return true
}

// applied records where a hunk applied, and the blank line it adds at the
// end of the file (eofLine, see applyHunk) as a whitespace error.
func (s *stage) applied(fp *filePatch, fr *fragment, at, expected, eofLine int) {
	s.res.Hunks = append(s.res.Hunks, HunkResult{Path: fp.name(), Hunk: fr.header, Offset: at - expected})
	if eofLine != 0 && !s.a.opts.noWS {
		s.whitespace(Problem{
			Kind: KindWhitespace, File: s.file, Line: max(eofLine, 0),
			Path: fp.name(), Message: msgBlankAtEOF,
		})
	}
}

// whitespace records whitespace errors: as errors, or as warnings under
// --whitespace=warn.
func (s *stage) whitespace(ps ...Problem) {
	if s.a.opts.wsWarn {
		s.res.Warnings = append(s.res.Warnings, ps...)
		return
	}
	s.res.Errors = append(s.res.Errors, ps...)
}

// staged returns the overlay the patch makes, in git's write-out order:
// first every removal, then every creation.
func (s *stage) staged() map[string]*tree.File {
	out := map[string]*tree.File{}
	for _, fp := range s.fps {
		if fp.isDelete || !(fp.isNew || fp.isCopy) {
			out[fp.oldName] = nil
		}
	}
	for _, fp := range s.fps {
		if !fp.isDelete {
			out[fp.newName] = &tree.File{Mode: treeMode(fp.newMode), Data: fp.result}
		}
	}
	return out
}

// checkLayout refuses a result that git could not write: a file under a path
// that is a file, or a file where a directory remains.
func (s *stage) checkLayout() {
	top := s.staged()
	view := func(p string) (*tree.File, bool, error) {
		if f, ok := top[p]; ok {
			return f, f != nil, nil
		}
		return s.a.Read(p)
	}
	for _, fp := range s.fps {
		if fp.isDelete || !(fp.isNew || fp.isRename || fp.isCopy) {
			continue
		}
		p := fp.newName
		for i := 0; i < len(p); i++ {
			if p[i] != '/' {
				continue
			}
			f, ok, err := view(p[:i])
			if err != nil {
				s.readErr(fp, p, err)
				return
			}
			if ok && f != nil {
				s.problem(KindExists, fp, p, "cannot create %s: %s is a file", p, p[:i])
				return
			}
		}
		dir, err := isDirIn(s.a.src, s.a.changes, top, p)
		if err != nil {
			s.readErr(fp, p, err)
			return
		}
		if dir {
			s.problem(KindExists, fp, p, "cannot create %s: a directory is in the way", p)
			return
		}
	}
}

// commit lays the patch over the Applier's state.
func (s *stage) commit() {
	for p, f := range s.staged() {
		if f == nil {
			if _, ok, err := s.a.src.Read(p); err == nil && !ok {
				delete(s.a.changes, p)
				continue
			}
		}
		s.a.changes[p] = f
	}
}

// treeMode turns a git mode from a patch into a tree mode.
func treeMode(m uint32) tree.Mode {
	switch m & modeTypeMask {
	case modeSymlink:
		return tree.Symlink
	case modeGitlink:
		return tree.Gitlink
	}
	if m&0o100 != 0 {
		return tree.Executable
	}
	return tree.Regular
}

package series

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/patchkit/patchkit/internal/diag"
)

// Load parses the series in dir: every *.diff and *.patch file directly in
// it, in byte-wise name order, which is the order of a shell glob handed to
// git apply. display is dir as messages name it (patches/kubeovn); each
// Patch.Path is display + "/" + name.
//
// Like the glob, Load skips names that start with a dot, and follows a
// symbolic link to a regular file; subdirectories (tests/) and other files
// are ignored, and a name that matches but is not a readable regular file is
// an error. A missing dir is a *diag.InputError; a dir without patches gives
// an empty slice. opts apply to every patch (see Parse).
func Load(dir string, display string, opts ...Option) ([]*Patch, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &diag.InputError{File: display, Msg: "patch directory does not exist"}
		}
		return nil, &diag.InputError{File: display, Msg: "reading the patch directory", Err: err}
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !(strings.HasSuffix(name, ".diff") || strings.HasSuffix(name, ".patch")) {
			continue
		}
		if e.IsDir() {
			continue
		}
		names = append(names, name)
	}
	slices.Sort(names)

	patches := make([]*Patch, 0, len(names))
	for _, name := range names {
		shown := name
		if display != "" {
			shown = strings.TrimSuffix(display, "/") + "/" + name
		}
		raw, err := readPatch(filepath.Join(dir, name), shown)
		if err != nil {
			return nil, err
		}
		if raw == nil {
			continue // a symbolic link to a directory
		}
		p, err := Parse(shown, raw, opts...)
		if err != nil {
			return nil, err
		}
		patches = append(patches, p)
	}
	return patches, nil
}

// readPatch reads a patch file, checking its size first. It returns nil, nil
// for a link to a directory, which Load ignores as it ignores directories.
func readPatch(full, shown string) ([]byte, error) {
	fi, err := os.Stat(full)
	if err != nil {
		return nil, &diag.InputError{File: shown, Msg: "reading the patch", Err: err}
	}
	switch {
	case fi.IsDir():
		return nil, nil
	case !fi.Mode().IsRegular():
		return nil, diag.Inputf(shown, 0, "not a regular file (%s)", fi.Mode().Type())
	case fi.Size() > MaxPatchSize:
		return nil, tooLarge(shown, fi.Size())
	}
	raw, err := os.ReadFile(full)
	if err != nil {
		return nil, &diag.InputError{File: shown, Msg: "reading the patch", Err: err}
	}
	if raw == nil {
		raw = []byte{}
	}
	return raw, nil
}

package tree

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// mkdirTemp is os.MkdirTemp with the mode git checkout gives a directory:
// 0755 less the umask, as for every directory below it, where os.MkdirTemp
// makes 0700. The tree's top directory keeps that mode once renamed into
// place.
func mkdirTemp(parent, pattern string) (string, error) {
	prefix, suffix, _ := strings.Cut(pattern, "*")
	for try := 0; try < 100; try++ {
		var b [6]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", err
		}
		name := filepath.Join(parent, prefix+hex.EncodeToString(b[:])+suffix)
		err := os.Mkdir(name, 0o755)
		if err == nil {
			return name, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", &fs.PathError{Op: "mkdirtemp", Path: filepath.Join(parent, pattern), Err: fs.ErrExist}
}

package adopt

import (
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"strings"

	"github.com/patchkit/patchkit/internal/buildfile"
	"github.com/patchkit/patchkit/internal/lazyre"
)

var grepFilterRE = lazyre.New(`grep\s+(?:-[A-Za-z]+\s+)*(?:'\^([^']*)'|"\^([^"]*)")`)

// releaseFilter reads the package's own release filter: a recipe line of the
// Makefile that builds the unit (or of the unit's own Makefile) that names
// the upstream and keeps its tags with grep '^v1\.15\.'. It returns the
// glob that selects the same tags (v1.15.*) and the Makefile:line.
func (u *unitCtx) releaseFilter(upstreamURL string) (glob, where string, ok bool) {
	repo := upstreamURL
	if p, err := url.Parse(upstreamURL); err == nil && p.Path != "" {
		repo = p.Path
	}
	repo = strings.TrimSuffix(strings.Trim(repo, "/"), ".git")
	var files []*buildfile.Makefile
	if u.makefile != nil {
		files = append(files, u.makefile)
	}
	own := path.Join(u.dir, "Makefile")
	if u.makefile == nil || u.makefile.File != own {
		if m, err := buildfile.ReadMakefile(filepath.Join(u.root, filepath.FromSlash(own)), own); err == nil {
			files = append(files, m)
		}
	}
	for _, m := range files {
		for _, l := range m.Recipes {
			if repo == "" || !strings.Contains(l.Text, repo) {
				continue
			}
			sm := grepFilterRE.FindStringSubmatch(l.Text)
			if sm == nil {
				continue
			}
			if g, ok := regexGlob(sm[1] + sm[2]); ok {
				return g, fmt.Sprintf("%s:%d", m.File, l.N), true
			}
		}
	}
	return "", "", false
}

// regexGlob turns an anchored grep prefix (what follows ^: v1\.15\.) into
// the glob that selects the same tags (v1.15.*); ok is false for a regular
// expression that is more than literal text.
func regexGlob(re string) (string, bool) {
	exact := strings.HasSuffix(re, "$") && !strings.HasSuffix(re, `\$`)
	re = strings.TrimSuffix(re, "$")
	var b strings.Builder
	for i := 0; i < len(re); i++ {
		c := re[i]
		switch {
		case c == '\\' && i+1 < len(re) && strings.IndexByte(`.-_/+`, re[i+1]) >= 0:
			b.WriteByte(re[i+1])
			i++
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '/':
			b.WriteByte(c)
		default:
			return "", false
		}
	}
	if b.Len() == 0 {
		return "", false
	}
	if !exact {
		b.WriteByte('*')
	}
	return b.String(), true
}

package adopt

import (
	"bytes"
	"fmt"
	"path"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/patchkit/patchkit/internal/lazyre"
	"github.com/patchkit/patchkit/internal/spec"
)

// render writes the spec of u: paths relative to the spec (./), the pin as
// its source when it has one.
func render(u *Unit, url, pin value, f *Fetch, ap *Apply, stamps []stampEntry) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Written by `patchkit init` from %s:%d (%s).\n", path.Base(u.Dockerfile), f.Line, f.How)
	if pin.Source != nil {
		fmt.Fprintf(&b, "# The pin is read from %s on every run: change it there.\n", pin.Where)
	}
	b.WriteString("# Paths starting with ./ or ../ are relative to this file.\n")
	b.WriteString("upstream:\n")
	writeValue(&b, "url", url)
	writeValue(&b, "ref", pin)
	switch g := releases(pin.Value); {
	case u.releases != "":
		fmt.Fprintf(&b, "  releases: %s  # the tags obsolete-check scans: the release filter of %s\n", quote(u.releases), u.releasesWhere)
	case g != "":
		fmt.Fprintf(&b, "  releases: %s  # the tags obsolete-check scans\n", quote(g))
	case spec.IsCommitPin(pin.Value):
		b.WriteString("  branches: [HEAD]  # the upstream's default branch, which obsolete-check scans for a commit pin\n")
	}
	if len(u.Versions) > 0 {
		b.WriteString("  versions:  # the other places that name the pinned version: upgrade moves them with the pin, verify checks they agree\n")
		for _, v := range u.Versions {
			fmt.Fprintf(&b, "    - file: %s  # %s:%d\n", quote(relPath(u.Dir, v.File)), v.File, v.Line)
			fmt.Fprintf(&b, "      %s: %s\n", v.Kind, quote(v.Name))
			fmt.Fprintf(&b, "      spelling: %s\n", v.Spelling)
		}
	}
	if u.Recount {
		fmt.Fprintf(&b, "patches:\n  dir: %s\n  recount: true  # the Dockerfile applies with git apply --recount\n", quote(relPath(u.Dir, u.Patches)))
	} else {
		fmt.Fprintf(&b, "patches: %s\n", quote(relPath(u.Dir, u.Patches)))
	}
	b.WriteString("build:\n")
	fmt.Fprintf(&b, "  dockerfile: %s\n", quote(relPath(u.Dir, u.Dockerfile)))
	b.WriteString("  context: unit  # the Dockerfile fetches the upstream and applies the series itself\n")
	if len(stamps) > 0 {
		fmt.Fprintf(&b, "image:\n  repository: %s  # pushed as <registry>/<repository>:<tag>; the tag is $IMAGE_TAG\n", quote(imageRepository(stamps, u.Dir)))
		b.WriteString("stamp:  # read from the yq -i lines of the recipe that builds the image\n")
		for _, st := range stamps {
			fmt.Fprintf(&b, "  - file: %s  # %s\n", quote(relPath(u.Dir, st.File)), st.Where)
			fmt.Fprintf(&b, "    key: %s\n", quote(st.Key))
			fmt.Fprintf(&b, "    format: %s\n", quote(st.Value))
		}
	}
	return b.Bytes()
}

func writeValue(b *bytes.Buffer, key string, v value) {
	if v.Source == nil {
		fmt.Fprintf(b, "  %s: %s\n", key, quote(v.Value))
		return
	}
	fmt.Fprintf(b, "  %s:\n", key)
	src := v.Source
	for _, kv := range [][2]string{
		{"dockerfile-arg", src.DockerfileArg}, {"dockerfile", src.Dockerfile},
		{"makefile-var", src.MakefileVar}, {"makefile", src.Makefile},
		{"prefix", src.Prefix}, {"suffix", src.Suffix},
	} {
		if kv[1] != "" {
			fmt.Fprintf(b, "    %s: %s\n", kv[0], quote(kv[1]))
		}
	}
	fmt.Fprintf(b, "    # %s at %s\n", v.Value, v.Where)
}

// quote writes s as a YAML scalar, quoted only when it must be.
func quote(s string) string {
	out, err := yaml.Marshal(s)
	if err != nil {
		return fmt.Sprintf("%q", s)
	}
	return strings.TrimSuffix(string(out), "\n")
}

var versionRE = lazyre.New(`^([^0-9]*)([0-9]+)\.[0-9]+`)

// releases is the glob of the pin's major release line (v1.15.10: v1.*),
// or "" for a pin that is no version (a commit id).
func releases(pin string) string {
	if spec.IsCommitID(pin) {
		return ""
	}
	m := versionRE.FindStringSubmatch(pin)
	if m == nil {
		return ""
	}
	return m[1] + m[2] + ".*"
}

package chart

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Render writes the spec file of units (one package's), with paths
// relative to the package (./).
func Render(pkg string, units []*Unit) []byte {
	var b strings.Builder
	b.WriteString("# Chart units: vendored directories this package's Makefile fetches and patches.\n")
	b.WriteString("# Written by patchkit init; see docs/spec.md (\"Chart units\").\n")
	b.WriteString("charts:\n")
	q := func(s string) string {
		out, _ := yaml.Marshal(s)
		return strings.TrimSpace(string(out))
	}
	rel := func(p string) string { return relFrom(pkg, p) }
	for _, u := range units {
		fmt.Fprintf(&b, "  - dir: %s\n", q(rel(u.Dir)))
		b.WriteString("    upstream:\n")
		up := u.Upstream
		for _, kv := range [][2]string{{"helm", up.Helm}, {"chart", up.Chart}, {"oci", up.OCI}, {"git", up.Git}, {"path", up.Path}, {"tag", up.Tag}, {"url", up.URL}, {"name", up.Name}} {
			if kv[1] != "" {
				fmt.Fprintf(&b, "      %s: %s\n", kv[0], q(kv[1]))
			}
		}
		v := u.Version
		switch {
		case v.Value != "":
			fmt.Fprintf(&b, "    version: %s\n", q(v.Value))
		case v.MakefileVar != "":
			fmt.Fprintf(&b, "    version:\n      makefile-var: %s\n      makefile: %s\n", v.MakefileVar, q(v.Makefile))
		default:
			fmt.Fprintf(&b, "    version:\n      chart-yaml: %s\n", v.ChartYAML)
		}
		if len(u.Remove) > 0 {
			fmt.Fprintf(&b, "    remove: [%s]\n", strings.Join(quoteAll(u.Remove, q), ", "))
		}
		if u.Series.Tool != "" {
			s := u.Series
			fmt.Fprintf(&b, "    series:\n      tool: %s\n", s.Tool)
			if s.Args != "" {
				fmt.Fprintf(&b, "      args: %s\n", q(s.Args))
			}
			if s.Workdir != "" && s.Workdir != "." && s.Workdir != "./" {
				fmt.Fprintf(&b, "      workdir: %s\n", q(s.Workdir))
			}
			if s.Target != "" {
				fmt.Fprintf(&b, "      target: %s\n", q(s.Target))
			}
			b.WriteString("      patches:\n")
			for i, p := range s.Patches {
				if i < len(s.PatchArgs) && s.PatchArgs[i] != "" {
					fmt.Fprintf(&b, "        - {file: %s, args: %s}\n", q(p), q(s.PatchArgs[i]))
					continue
				}
				fmt.Fprintf(&b, "        - %s\n", q(p))
			}
		}
		if u.Image != "" {
			fmt.Fprintf(&b, "    image: %s\n", q(rel(u.Image)))
		}
	}
	return []byte(b.String())
}

func quoteAll(in []string, q func(string) string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = q(s)
	}
	return out
}

// WriteSpecs writes one spec per package for the readable units found,
// unless one exists (force replaces it) or dryRun; it sets each Found's
// Status (new, written, exists). Every spec is checked by loading it
// before any is written, so bad input writes nothing.
func WriteSpecs(root string, found []Found, force, dryRun bool) error {
	byPkg := map[string][]int{}
	for i, f := range found {
		if f.Unit != nil && f.Problem == "" {
			byPkg[path.Dir(f.Spec)] = append(byPkg[path.Dir(f.Spec)], i)
		}
	}
	var pkgs []string
	for p := range byPkg {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	type write struct {
		file string
		data []byte
		idx  []int
	}
	var writes []write
	for _, pkg := range pkgs {
		var units []*Unit
		for _, i := range byPkg[pkg] {
			units = append(units, found[i].Unit)
		}
		data := Render(pkg, units)
		file := path.Join(pkg, FileName)
		parsed, err := Parse(root, file, data)
		if err != nil {
			// Not this package's spec: the others are still written.
			for _, i := range byPkg[pkg] {
				found[i].Status = "unreadable"
				found[i].Problem = fmt.Sprintf("%s: the spec init would write does not load: %v", found[i].Dir, err)
			}
			continue
		}
		for k, i := range byPkg[pkg] {
			found[i].Pin, _ = parsed.Charts[k].Pin(root)
		}
		_, err = os.Stat(filepath.Join(root, filepath.FromSlash(file)))
		status := "new"
		if err == nil && !force {
			status = "exists"
		}
		for _, i := range byPkg[pkg] {
			found[i].Status = status
		}
		if status == "new" && !dryRun {
			writes = append(writes, write{file, data, byPkg[pkg]})
		}
	}
	for _, w := range writes {
		full := filepath.Join(root, filepath.FromSlash(w.file))
		tmp := full + ".tmp-patchkit"
		if err := os.WriteFile(tmp, w.data, 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, full); err != nil {
			os.Remove(tmp)
			return err
		}
		for _, i := range w.idx {
			found[i].Status = "written"
		}
	}
	return nil
}

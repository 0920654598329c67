// Command backportsurvey grades every backport of a release branch against
// the main-branch commit it carries, with patchkit's backport grade and with
// the git CLI's (hack/cut-backports.sh's oracle), and reports where they
// differ. A backport is a release-branch commit (not on the main branch)
// whose subject, without a "[release-…]" prefix and "(#N)" suffixes, is the
// subject of exactly one main-branch commit; dependency bumps and
// regenerated files are left out. Run from the repository root:
//
//	go run ./hack/backportsurvey -repo GITDIR -main master -release release-1.15 -since 2025-06-01
//
// It exits 1 when a grade differs from git's.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"

	"github.com/patchkit/patchkit/internal/backport"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/tree"
)

var (
	releasePrefix = regexp.MustCompile(`^\[release-[0-9.]+\]\s*`)
	prSuffix      = regexp.MustCompile(`(\s*\(#\d+\))+\s*$`)
	skipped       = regexp.MustCompile(`^(bump|update|release|prepare|chore\(deps\)|build\(deps\)|generate|make generate)\b`)
)

func main() {
	repo := flag.String("repo", "", "the upstream's git directory")
	mainBranch := flag.String("main", "main", "the main branch")
	release := flag.String("release", "", "the release branch")
	since := flag.String("since", "2025-06-01", "commits after this date (git log --since)")
	flag.Parse()
	if *repo == "" || *release == "" {
		flag.Usage()
		os.Exit(2)
	}
	pairs, err := findPairs(*repo, *mainBranch, *release, *since)
	if err != nil {
		fatal(err)
	}
	oracle, err := gitGrades(*repo, pairs)
	if err != nil {
		fatal(err)
	}
	tally := map[string]int{}
	bad := 0
	for _, p := range pairs {
		got, reason, err := grade(*repo, p[0], p[1])
		if errors.Is(err, errNoDiff) {
			tally["skipped: "+err.Error()]++
			continue
		}
		if err != nil {
			fatal(fmt.Errorf("%s %s: %w", p[0], p[1], err))
		}
		want := oracle[p[0]+" "+p[1]]
		tally[string(got)+" (git "+want+")"]++
		if string(got) != want {
			bad++
			fmt.Printf("DIFFERS %s %s: patchkit %s (%s), git %s\n", p[0], p[1], got, reason, want)
		}
	}
	fmt.Printf("%s..%s since %s: %d pairs\n", *mainBranch, *release, *since, len(pairs))
	for k, n := range tally {
		fmt.Printf("  %d %s\n", n, k)
	}
	if bad > 0 {
		os.Exit(1)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "backportsurvey:", err)
	os.Exit(2)
}

func git(repo string, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"--git-dir", repo}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

// findPairs returns [main commit, release commit] pairs.
func findPairs(repo, mainBranch, release, since string) ([][2]string, error) {
	log := func(ref string) ([][2]string, error) {
		out, err := git(repo, nil, "log", "--no-merges", "--since="+since, "--format=%H%x09%s", ref)
		if err != nil {
			return nil, err
		}
		var cs [][2]string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if id, subject, ok := strings.Cut(l, "\t"); ok {
				cs = append(cs, [2]string{id, subject})
			}
		}
		return cs, nil
	}
	key := func(s string) string {
		return strings.ToLower(strings.TrimSpace(prSuffix.ReplaceAllString(releasePrefix.ReplaceAllString(s, ""), "")))
	}
	onMain, err := log(mainBranch)
	if err != nil {
		return nil, err
	}
	onRelease, err := log(release)
	if err != nil {
		return nil, err
	}
	mainIDs := map[string]bool{}
	bySubject := map[string][]string{}
	for _, c := range onMain {
		mainIDs[c[0]] = true
		bySubject[key(c[1])] = append(bySubject[key(c[1])], c[0])
	}
	var pairs [][2]string
	for _, c := range onRelease {
		k := key(c[1])
		if mainIDs[c[0]] || skipped.MatchString(k) || len(bySubject[k]) != 1 {
			continue
		}
		pairs = append(pairs, [2]string{bySubject[k][0], c[0]})
	}
	return pairs, nil
}

// gitGrades runs hack/cut-backports.sh's oracle on the pairs.
func gitGrades(repo string, pairs [][2]string) (map[string]string, error) {
	var in bytes.Buffer
	for _, p := range pairs {
		fmt.Fprintf(&in, "%s %s\n", p[0], p[1])
	}
	cmd := exec.Command("bash", "hack/cut-backports.sh")
	cmd.Env = append(os.Environ(), "ORACLE_UP="+repo)
	cmd.Stdin = &in
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("hack/cut-backports.sh: %w", err)
	}
	grades := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(l); len(f) == 3 {
			grades[f[0]+" "+f[1]] = f[2]
		}
	}
	return grades, nil
}

// errNoDiff is grade's answer for a pair of which one commit changes nothing.
var errNoDiff = errors.New("a commit with no diff")

// grade is patchkit's grade of release commit b, as `git format-patch`
// writes it, against main commit m, with the trees of the files they touch.
func grade(repo, m, b string) (backport.Grade, string, error) {
	patchText, err := git(repo, nil, "format-patch", "-1", "--stdout", b)
	if err != nil {
		return "", "", err
	}
	upDiff, err := git(repo, nil, "show", "--format=", "--binary", "--no-color", "--no-ext-diff", "--no-textconv", "--diff-merges=first-parent", m)
	if err != nil {
		return "", "", err
	}
	if !bytes.Contains(upDiff, []byte("diff --git ")) || !bytes.Contains(patchText, []byte("diff --git ")) {
		return "", "", errNoDiff
	}
	p, err := series.Parse(b, patchText)
	if err != nil {
		return "", "", err
	}
	up, err := series.Parse(m, upDiff)
	if err != nil {
		return "", "", err
	}
	var paths []string
	for _, q := range []*series.Patch{p, up} {
		for _, f := range q.Files {
			for _, n := range []string{f.OldName, f.NewName} {
				if n != "" {
					paths = append(paths, n)
				}
			}
		}
	}
	parent, err := files(repo, m+"^", paths)
	if err != nil {
		return "", "", err
	}
	commit, err := files(repo, m, paths)
	if err != nil {
		return "", "", err
	}
	v, err := backport.Compare(p, upDiff, &backport.Trees{Parent: parent, Commit: commit})
	return v.Grade, v.Reason, err
}

// files reads the paths rev has.
func files(repo, rev string, paths []string) (tree.Map, error) {
	m := tree.Map{}
	for _, p := range paths {
		out, err := git(repo, nil, "ls-tree", rev, "--", p)
		if err != nil {
			return nil, err
		}
		f := strings.Fields(string(out))
		if len(f) < 4 || f[1] != "blob" {
			continue
		}
		var mode uint32
		fmt.Sscanf(f[0], "%o", &mode)
		data, err := git(repo, nil, "cat-file", "blob", f[2])
		if err != nil {
			return nil, err
		}
		m[p] = &tree.File{Mode: tree.Mode(mode), Data: data}
	}
	return m, nil
}

package spec

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/patchkit/patchkit/internal/tree"
)

// Apply is the apply key: the tool the unit's recipe applies the series
// with, the recipe's flags, and the order of the patches. patchkit models
// the tool: its whitespace rule, its fuzz, how it reads a mail. The zero
// value (every key left out) is the default, git apply --whitespace=error of
// the glob, which is what patchkit did before the key existed.
type Apply struct {
	// Tool is git-apply (the default), git-am or patch.
	Tool string `yaml:"tool"`
	// Args are the recipe's flags, as written (see validateApply for the
	// ones each tool takes).
	Args []string `yaml:"args"`
	// Order is glob (the default: byte-wise name order, as the shell glob
	// sorts in the C locale) or series (the order of a quilt series file).
	Order string `yaml:"order"`
	// Series is the quilt series file of order: series, relative to the
	// root (the path rule applies); default: series in the patch directory.
	Series string `yaml:"series"`

	// Whitespace is the whitespace rule Args give: error, warn or nowarn
	// (see the Whitespace constants). Defaults: error for git-apply (the
	// check patchkit always made), warn for git-am (git's default), nowarn
	// for patch (GNU patch checks no whitespace).
	Whitespace string `yaml:"-"`
	// Fuzz is GNU patch's fuzz factor (-F N, default 2); 0 for git's tools.
	Fuzz int `yaml:"-"`
	// Loose is GNU patch -l (--ignore-whitespace): runs of blanks match.
	Loose bool `yaml:"-"`
	// KeepCR is git am --keep-cr: the CR of a CRLF line stays. git am
	// (mailsplit) strips it by default.
	KeepCR bool `yaml:"-"`
}

// The apply tools.
const (
	ToolGitApply = "git-apply"
	ToolGitAm    = "git-am"
	ToolPatch    = "patch"
)

// The apply orders.
const (
	OrderGlob   = "glob"
	OrderSeries = "series"
)

// The whitespace rules (git apply --whitespace=...).
const (
	WhitespaceError  = "error"
	WhitespaceWarn   = "warn"
	WhitespaceNowarn = "nowarn"
)

// DefaultFuzz is GNU patch's default fuzz factor.
const DefaultFuzz = 2

var (
	applyTools  = []string{ToolGitApply, ToolGitAm, ToolPatch}
	applyOrders = []string{OrderGlob, OrderSeries}
)

// Mail reports whether the tool reads each patch file as a mailbox (git am).
func (a Apply) Mail() bool { return a.Tool == ToolGitAm }

// SeriesFile is the quilt series file's path relative to the root, for
// order: series; "" for order: glob.
func (s *Spec) SeriesFile() string {
	if s.Apply.Order != OrderSeries {
		return ""
	}
	return s.Apply.Series
}

// validateApply sets the apply defaults and reads Args. An unknown tool,
// order or flag, a flag patchkit does not model, and a strip or directory
// that contradicts the patches mapping are bad input naming the key.
func (s *Spec) validateApply(root string) error {
	a := &s.Apply
	if a.Tool == "" {
		a.Tool = DefaultApplyTool
	}
	if !contains(applyTools, a.Tool) {
		return s.errf("apply.tool", "%q is not one of %s", a.Tool, strings.Join(applyTools, ", "))
	}
	if a.Order == "" {
		a.Order = DefaultApplyOrder
	}
	if !contains(applyOrders, a.Order) {
		return s.errf("apply.order", "%q is not one of %s", a.Order, strings.Join(applyOrders, ", "))
	}
	switch {
	case a.Order == OrderSeries && a.Series == "":
		a.Series = path.Join(s.Patches, DefaultSeriesFile)
	case a.Order == OrderSeries:
		a.Series = s.Rel(a.Series)
	case a.Series != "":
		return s.errf("apply.series", "is read only with order: series (the order here is %s)", a.Order)
	}
	if a.Series != "" {
		key := "apply.series"
		if s.lines[key] == 0 {
			key = "apply.order"
		}
		if err := inRepo(root, a.Series); err != nil {
			return s.errf(key, "%v", err)
		}
		if root != "" {
			fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(a.Series)))
			if err != nil || !fi.Mode().IsRegular() {
				return s.errf(key, "series file %s does not exist (order: series reads the patches' order from it)", a.Series)
			}
		}
	}
	switch a.Tool {
	case ToolGitApply:
		a.Whitespace = WhitespaceError
	case ToolGitAm:
		a.Whitespace = WhitespaceWarn
	case ToolPatch:
		a.Whitespace, a.Fuzz = WhitespaceNowarn, DefaultFuzz
	}
	return s.readArgs()
}

// readArgs reads the recipe's flags of s.Apply.Tool.
func (s *Spec) readArgs() error {
	a := &s.Apply
	stripSet := false
	for i := 0; i < len(a.Args); i++ {
		arg := a.Args[i]
		key := fmt.Sprintf("apply.args[%d]", i)
		bad := func(format string, args ...any) error {
			return s.errf(key, "%s: "+format, append([]any{a.Tool + " " + arg}, args...)...)
		}
		// value returns the value of a flag spelled -xV, --flag=V or -x V.
		value := func(short, long string) (string, bool) {
			switch {
			case short != "" && arg == short, long != "" && arg == long:
				if i+1 < len(a.Args) {
					i++
					return a.Args[i], true
				}
				return "", true
			case long != "" && strings.HasPrefix(arg, long+"="):
				return arg[len(long)+1:], true
			case short != "" && strings.HasPrefix(arg, short) && !strings.HasPrefix(arg, "--"):
				return arg[len(short):], true
			}
			return "", false
		}
		if v, ok := value("-p", stripLong(a.Tool)); ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return bad("want -p<n> with n 1 or more (-p0 is not supported)")
			}
			if err := s.setStrip(key, n); err != nil {
				return err
			}
			stripSet = true
			continue
		}
		switch a.Tool {
		case ToolGitApply, ToolGitAm:
			if v, ok := value("", "--whitespace"); ok {
				switch v {
				case "error", "error-all":
					a.Whitespace = WhitespaceError
				case "warn":
					a.Whitespace = WhitespaceWarn
				case "nowarn":
					a.Whitespace = WhitespaceNowarn
				case "fix", "strip":
					return bad("patchkit does not model it: git then rewrites the whitespace of the added lines (and matches context with whitespace fixed); fix the patches instead and use --whitespace=error, warn or nowarn")
				default:
					return bad("want --whitespace=error, error-all, warn or nowarn")
				}
				continue
			}
			if v, ok := value("", "--directory"); ok {
				if err := s.setDirectory(key, v); err != nil {
					return err
				}
				continue
			}
			if arg == "-3" || arg == "--3way" {
				return bad("patchkit cannot model a 3-way merge (it needs the blobs the index lines name and the merge git would do); a patch that needs it fails without it, so refresh the patch and leave -3 out")
			}
			if a.Tool == ToolGitApply && arg == "--recount" {
				s.Series.Recount = true
				continue
			}
			if a.Tool == ToolGitAm && (arg == "--keep-cr" || arg == "--no-keep-cr") {
				a.KeepCR = arg == "--keep-cr"
				continue
			}
			if contains(gitNeutral(a.Tool), arg) {
				continue
			}
		case ToolPatch:
			if v, ok := value("-F", "--fuzz"); ok {
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 {
					return bad("want a fuzz factor, 0 or more")
				}
				a.Fuzz = n
				continue
			}
			if arg == "-l" || arg == "--ignore-whitespace" {
				a.Loose = true
				continue
			}
			if contains(patchNeutral, arg) {
				continue
			}
		}
		return s.errf(key, "%s: not a flag patchkit models for %s (it reads %s)", arg, a.Tool, strings.Join(modelled(a.Tool), ", "))
	}
	if a.Tool == ToolPatch && !stripSet && s.Series.Strip == 0 {
		key := "apply.args"
		if s.lines[key] == 0 {
			key = "apply.tool"
		}
		return s.errf(key, "patch without -p<n> keeps only each file's base name, which patchkit does not model: give the recipe's -p1 (or -p<n>)")
	}
	return nil
}

// stripLong is the long spelling of -p of tool ("" for git's tools, whose
// -p has none).
func stripLong(tool string) string {
	if tool == ToolPatch {
		return "--strip"
	}
	return ""
}

// gitNeutral are the flags of git apply and git am that change nothing in
// the tree patchkit checks: they touch the commit (dates, message,
// sign-off), the index or the messages git prints.
func gitNeutral(tool string) []string {
	if tool == ToolGitApply {
		return []string{"-v", "--verbose", "-q", "--quiet", "--index", "--check", "--no-3way"}
	}
	return []string{"--committer-date-is-author-date", "--ignore-date", "-s", "--signoff", "-q", "--quiet",
		"-k", "--keep", "--keep-non-patch", "-u", "--utf8", "--no-utf8", "-m", "--message-id",
		"--no-message-id", "--scissors", "--no-scissors", "--no-3way", "--no-gpg-sign", "--no-verify", "-n"}
}

// patchNeutral are GNU patch's flags that change nothing in the verdict: a
// reversed or applied patch fails either way (-N skips it, and without a
// terminal patch skips it too), and the messages.
var patchNeutral = []string{"-N", "--forward", "-s", "--silent", "--quiet", "--no-backup-if-mismatch", "-t", "--batch", "-E", "--remove-empty-files"}

// modelled lists the flags tool reads, for the message of an unknown one.
func modelled(tool string) []string {
	switch tool {
	case ToolPatch:
		return append([]string{"-p<n>", "--strip=<n>", "-F <n>", "--fuzz=<n>", "-l"}, patchNeutral...)
	case ToolGitAm:
		return append([]string{"-p<n>", "--directory=<dir>", "--whitespace=<error|warn|nowarn>", "--keep-cr"}, gitNeutral(tool)...)
	}
	return append([]string{"-p<n>", "--directory=<dir>", "--whitespace=<error|warn|nowarn>", "--recount"}, gitNeutral(tool)...)
}

// setStrip sets the strip level a -p<n> flag gives; a patches.strip that
// says otherwise is bad input.
func (s *Spec) setStrip(key string, n int) error {
	if s.Series.Strip != 0 && s.Series.Strip != n {
		return s.errf(key, "-p%d contradicts patches.strip: %d on line %d: write one", n, s.Series.Strip, s.lines["patches.strip"])
	}
	s.Series.Strip = n
	return nil
}

// setDirectory sets the directory a --directory flag gives, checked as
// patches.directory is.
func (s *Spec) setDirectory(key, dir string) error {
	if s.Series.Directory != "" && strings.Trim(s.Series.Directory, "/") != strings.Trim(dir, "/") {
		return s.errf(key, "--directory=%s contradicts patches.directory: %s on line %d: write one", dir, s.Series.Directory, s.lines["patches.directory"])
	}
	if strings.HasPrefix(dir, "/") {
		return s.errf(key, "--directory=%s is absolute: want a path relative to the upstream tree", dir)
	}
	if err := tree.Clean(strings.TrimSuffix(dir, "/")); err != nil || dir == "" {
		return s.errf(key, "--directory=%s: want a clean relative path in the upstream tree", dir)
	}
	s.Series.Directory = dir
	return nil
}

// Package root assembles the patchkit command tree and its global flags.
package root

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/patchkit/patchkit/internal/cmd/apply"
	"github.com/patchkit/patchkit/internal/cmd/backport"
	"github.com/patchkit/patchkit/internal/cmd/build"
	forwardcmd "github.com/patchkit/patchkit/internal/cmd/forward"
	"github.com/patchkit/patchkit/internal/cmd/gate"
	initcmd "github.com/patchkit/patchkit/internal/cmd/init"
	"github.com/patchkit/patchkit/internal/cmd/matrix"
	"github.com/patchkit/patchkit/internal/cmd/obsolete"
	"github.com/patchkit/patchkit/internal/cmd/refresh"
	"github.com/patchkit/patchkit/internal/cmd/stamp"
	statuscmd "github.com/patchkit/patchkit/internal/cmd/status"
	"github.com/patchkit/patchkit/internal/cmd/upgrade"
	"github.com/patchkit/patchkit/internal/cmd/verify"
	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/diag"
)

// Version is set at build time with -ldflags "-X .../root.Version=..."
// (make bin: git describe). Left unset, version reads the module's build
// information: the module version `go install …@v1.2.3` records, else the
// VCS revision `go build` in a checkout records.
var Version = ""

// version is Version, or what the binary's build information says.
func version() string {
	if Version != "" {
		return Version
	}
	return versionOf(debug.ReadBuildInfo())
}

// versionOf is the version a build's information gives: the main module's
// version (not "(devel)"), else the VCS revision and time, with "+dirty"
// for a modified tree, else "dev".
func versionOf(bi *debug.BuildInfo, ok bool) string {
	if !ok || bi == nil {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, at string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v := "devel " + rev
	if dirty {
		v += "+dirty"
	}
	if at != "" {
		v += " (" + at + ")"
	}
	return v
}

// NewCmdRoot returns the patchkit command with every verb.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "patchkit",
		Short: "Carry patch series against pinned upstream releases and ship images built from them",
		Long: `patchkit applies an image's patch series to its pinned upstream release,
checks it on pull requests, finds which upstream release made each patch
obsolete, and builds, pushes and stamps the patched image.

Exit codes: 0 all good; 1 findings; 2 bad invocation or bad input. An error
goes to stderr and, with -o json, github or markdown, to stdout in that format
(json: {"error","exitCode","kind"}). Credentials never reach the output, and
text from servers never becomes a CI workflow command.`,
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.SetOut(f.IO.Out)
	cmd.SetErr(f.IO.ErrOut)
	// deprecation notes of the files a run reads (a spec's old spellings)
	diag.SetNotes(func(n diag.Note) { fmt.Fprintln(f.IO.ErrOut, "patchkit: warning: "+n.String()) })
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &cmdutil.UsageError{Err: err}
	})
	f.AddOutputFlag(cmd)
	f.AddRootFlag(cmd)
	f.AddUpstreamFlags(cmd)

	cmd.AddCommand(apply.NewCmdApply(f, nil))
	cmd.AddCommand(matrix.NewCmdMatrix(f, nil))
	cmd.AddCommand(obsolete.NewCmdObsolete(f, nil))
	cmd.AddCommand(verify.NewCmdVerify(f, nil))
	cmd.AddCommand(backport.NewCmdBackport(f, nil))
	cmd.AddCommand(gate.NewCmdGate(f, nil))
	cmd.AddCommand(build.NewCmdBuild(f, nil))
	cmd.AddCommand(stamp.NewCmdStamp(f, nil))
	cmd.AddCommand(initcmd.NewCmdInit(f, nil))
	cmd.AddCommand(upgrade.NewCmdUpgrade(f, nil))
	cmd.AddCommand(refresh.NewCmdRefresh(f, nil))
	cmd.AddCommand(statuscmd.NewCmdStatus(f, nil))
	cmd.AddCommand(forwardcmd.NewCmdForward(f, nil))
	return cmd
}

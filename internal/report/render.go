package report

import (
	"io"

	"github.com/patchkit/patchkit/internal/adopt"
	"github.com/patchkit/patchkit/internal/status"
	"github.com/patchkit/patchkit/internal/verify"
)

// The Render functions are the commands' entry points from before Export:
// each renders one command's result through it, output unchanged.

// RenderApply writes apply results in format f (Export of an ApplyRun).
func RenderApply(w io.Writer, f Format, results []Apply, single bool) error {
	return Export(w, f, ApplyRun{Run[Apply]{results, single}})
}

// RenderBackport writes a backport result in format f (Export).
func RenderBackport(w io.Writer, f Format, r Backport) error { return Export(w, f, r) }

// RenderBuild writes build results in format f (Export of a BuildRun).
func RenderBuild(w io.Writer, f Format, results []Build, single bool) error {
	return Export(w, f, BuildRun{Run[Build]{results, single}})
}

// RenderGate writes gate results in format f (Export of a GateRun).
func RenderGate(w io.Writer, f Format, results []Gate, single bool) error {
	return Export(w, f, GateRun{Run[Gate]{results, single}})
}

// RenderStamp writes stamp results in format f (Export of a StampRun).
func RenderStamp(w io.Writer, f Format, results []Stamp, single bool) error {
	return Export(w, f, StampRun{Run[Stamp]{results, single}})
}

// RenderError writes e in format f (Export): text prints nothing (the
// plain message goes to stderr), json one object, markdown a short block,
// github an ::error annotation, on the file and line when there are some.
func RenderError(w io.Writer, f Format, e Error) error { return Export(w, f, e) }

// RenderForward renders a forward result (Export).
func RenderForward(w io.Writer, f Format, r Forward) error { return Export(w, f, r) }

// RenderInit writes what `patchkit init` found and wrote in format f
// (Export of an InitRun).
func RenderInit(w io.Writer, f Format, units []adopt.Unit) error {
	return Export(w, f, InitRun(units))
}

// RenderObsolete writes obsolete-check results in format f (Export of an
// ObsoleteRun). single says whether exactly one image was named.
func RenderObsolete(w io.Writer, f Format, results []Obsolete, single bool) error {
	return Export(w, f, ObsoleteRun{Run[Obsolete]{results, single}})
}

// RenderStatus renders a status report (Export of a Status).
func RenderStatus(w io.Writer, f Format, r *status.Report) error {
	return Export(w, f, Status{r})
}

// RenderUpgrade writes an upgrade in format f (Export); markdown is fit for
// a pull request's body.
func RenderUpgrade(w io.Writer, f Format, u Upgrade) error { return Export(w, f, u) }

// RenderRefresh writes a refresh in format f (Export).
func RenderRefresh(w io.Writer, f Format, r Refresh) error { return Export(w, f, r) }

// RenderVerify writes verify results in format f (Export of a VerifyRun).
func RenderVerify(w io.Writer, f Format, results []verify.Result, single bool) error {
	return Export(w, f, VerifyRun{Run[verify.Result]{results, single}})
}

// everyFormat is a result that renders each of -o's four formats.
type everyFormat interface {
	Result
	Texter
	Markdowner
	GitHubber
}

// Every command's result renders every format: none falls back to another.
var (
	_ everyFormat = ApplyRun{}
	_ everyFormat = ObsoleteRun{}
	_ everyFormat = BuildRun{}
	_ everyFormat = GateRun{}
	_ everyFormat = StampRun{}
	_ everyFormat = VerifyRun{}
	_ everyFormat = Backport{}
	_ everyFormat = Upgrade{}
	_ everyFormat = UpToDate{}
	_ everyFormat = Refresh{}
	_ everyFormat = Units{}
	_ everyFormat = UnitFailed{}
	_ everyFormat = Forward{}
	_ everyFormat = InitRun{}
	_ everyFormat = Error{}
	_ everyFormat = Status{}
	_ HTMLer      = Status{}
)

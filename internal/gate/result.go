package gate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Test statuses.
const (
	StatusPass = "pass"
	StatusFail = "fail"
	StatusSkip = "skip"
)

// TestResult is one test or subtest that ran.
type TestResult struct {
	// Name is the test's name as go test prints it: TestX or TestX/sub_test.
	Name string `json:"name"`
	// Package is the import path of its package.
	Package string `json:"package"`
	// Status is pass, fail or skip. A test that started but never finished
	// (a panic, a timeout) failed.
	Status string `json:"status"`
	// Output is what a failed test printed, its last lines.
	Output string `json:"output,omitempty"`
}

// Result is the verdict of one go test run.
type Result struct {
	// OK is true only if at least one test ran and every test that ran,
	// subtests included, passed.
	OK bool `json:"ok"`
	// Ran, Passed, Failed and Skipped count tests and subtests.
	Ran     int `json:"ran"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
	// Tests lists every test that ran, in the order they started.
	Tests []TestResult `json:"tests"`
	// BuildFailed says the test package did not compile.
	BuildFailed bool `json:"buildFailed,omitempty"`
	// Message is the verdict in words.
	Message string `json:"message"`
	// Output is the build errors, or what go printed outside any test, when
	// that explains the verdict.
	Output string `json:"output,omitempty"`
}

// Status returns the status of the named test, or "" if it did not run.
func (r *Result) Status(name string) string {
	for _, t := range r.Tests {
		if t.Name == name {
			return t.Status
		}
	}
	return ""
}

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	ImportPath  string
	FailedBuild string
}

// run is what parse gathers from the events.
type run struct {
	tests       []*TestResult
	output      map[*TestResult]*strings.Builder
	buildFailed bool
	buildOut    strings.Builder
	pkgOut      strings.Builder
	pkgFailed   bool
	other       strings.Builder // lines that are not JSON
}

func parse(stdout []byte) *run {
	r := &run{output: map[*TestResult]*strings.Builder{}}
	byKey := map[string]*TestResult{}
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			r.other.Write(line)
			r.other.WriteByte('\n')
			continue
		}
		switch ev.Action {
		case "build-output":
			r.buildOut.WriteString(ev.Output)
			continue
		case "build-fail":
			r.buildFailed = true
			continue
		}
		if ev.Test == "" {
			switch ev.Action {
			case "output":
				r.pkgOut.WriteString(ev.Output)
			case "fail":
				r.pkgFailed = true
				if ev.FailedBuild != "" {
					r.buildFailed = true
				}
			}
			continue
		}
		key := ev.Package + "\x00" + ev.Test
		t := byKey[key]
		if t == nil {
			t = &TestResult{Name: ev.Test, Package: ev.Package}
			byKey[key] = t
			r.tests = append(r.tests, t)
			r.output[t] = &strings.Builder{}
		}
		switch ev.Action {
		case "output":
			r.output[t].WriteString(ev.Output)
		case "pass", "fail", "skip":
			t.Status = ev.Action
		}
	}
	return r
}

// evaluate turns a parsed run into the gate's verdict. exitErr is go's exit
// error, nil when it exited 0.
func evaluate(r *run, stderr []byte, exitErr error, pattern, pkg string) *Result {
	res := &Result{Tests: []TestResult{}}
	var failed, skipped []string
	for _, t := range r.tests {
		if t.Status == "" {
			t.Status = StatusFail // started, never finished
		}
		res.Ran++
		switch t.Status {
		case StatusPass:
			res.Passed++
		case StatusFail:
			res.Failed++
			failed = append(failed, t.Name)
			t.Output = tail(r.output[t].String(), 30)
		case StatusSkip:
			res.Skipped++
			skipped = append(skipped, t.Name)
		}
		res.Tests = append(res.Tests, *t)
	}
	goOutput := strings.TrimSpace(r.buildOut.String() + r.other.String() + string(stderr))
	switch {
	case r.buildFailed || (res.Ran == 0 && exitErr != nil):
		res.BuildFailed = r.buildFailed
		res.Message = fmt.Sprintf("go test %s failed before running any test", pkg)
		if r.buildFailed {
			res.Message = fmt.Sprintf("the test package %s does not build", pkg)
		}
		res.Output = tail(goOutput+"\n"+r.pkgOut.String(), 40)
	case res.Ran == 0:
		res.Message = fmt.Sprintf("the -run pattern %q matched nothing in %s: 0 tests ran", pattern, pkg)
	case res.Failed > 0:
		res.Message = fmt.Sprintf("%s failed", list(leaves(failed)))
	case res.Skipped > 0:
		res.Message = fmt.Sprintf("%s skipped: a skipped test proves nothing", list(skipped))
	case r.pkgFailed || exitErr != nil:
		res.Message = fmt.Sprintf("go test %s failed outside the tests", pkg)
		res.Output = tail(goOutput+"\n"+r.pkgOut.String(), 40)
	default:
		res.OK = true
		res.Message = fmt.Sprintf("%s passed", list(topLevel(res.Tests)))
	}
	return res
}

// leaves keeps the names that have no descendant among names: a parent
// fails because its subtest did, and naming the subtest says more.
func leaves(names []string) []string {
	var out []string
	for _, n := range names {
		leaf := true
		for _, m := range names {
			if strings.HasPrefix(m, n+"/") {
				leaf = false
				break
			}
		}
		if leaf {
			out = append(out, n)
		}
	}
	return out
}

func topLevel(tests []TestResult) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range tests {
		if !strings.Contains(t.Name, "/") && !seen[t.Name] {
			seen[t.Name] = true
			out = append(out, t.Name)
		}
	}
	sort.Strings(out)
	return out
}

// list renders names for a message: "A", "A and B", "A, B and 3 more".
func list(names []string) string {
	switch {
	case len(names) == 0:
		return "no test"
	case len(names) == 1:
		return names[0]
	case len(names) == 2:
		return names[0] + " and " + names[1]
	case len(names) == 3:
		return names[0] + ", " + names[1] + " and " + names[2]
	}
	return fmt.Sprintf("%s, %s and %d more", names[0], names[1], len(names)-2)
}

// tail returns the last n lines of s, trimmed.
func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("... (%d lines before)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

package gate

import (
	"os/exec"
	"strings"
	"testing"
)

// ev renders one go test -json line.
func ev(action, test, output string) string {
	s := `{"Action":"` + action + `","Package":"example.com/greeter/greet"`
	if test != "" {
		s += `,"Test":"` + test + `"`
	}
	if output != "" {
		s += `,"Output":` + quote(output)
	}
	return s + "}\n"
}

func quote(s string) string {
	r := strings.NewReplacer(`"`, `\"`, "\n", `\n`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`
}

func lines(evs ...string) []byte { return []byte(strings.Join(evs, "")) }

var exit1 = &exec.ExitError{}

func TestEvaluate(t *testing.T) {
	tests := []struct {
		name                       string
		stdout                     []byte
		stderr                     string
		exitErr                    error
		wantOK, wantBuild          bool
		ran, passed, failed, skips int
		wantMsg                    string
	}{
		{
			name: "all pass",
			stdout: lines(ev("start", "", ""), ev("run", "TestG", ""), ev("run", "TestG/a", ""), ev("pass", "TestG/a", ""),
				ev("run", "TestG/b", ""), ev("pass", "TestG/b", ""), ev("pass", "TestG", ""), ev("pass", "", "")),
			wantOK: true, ran: 3, passed: 3, wantMsg: "TestG passed",
		},
		{
			name: "subtest fails",
			stdout: lines(ev("run", "TestG", ""), ev("run", "TestG/a", ""), ev("pass", "TestG/a", ""),
				ev("run", "TestG/b", ""), ev("output", "TestG/b", "    x_test.go:9: got 1\n"), ev("fail", "TestG/b", ""), ev("fail", "TestG", ""), ev("fail", "", "")),
			exitErr: exit1, ran: 3, passed: 1, failed: 2, wantMsg: "TestG/b failed",
		},
		{
			name:    "matched nothing",
			stdout:  lines(ev("start", "", ""), ev("output", "", "testing: warning: no tests to run\n"), ev("pass", "", "")),
			wantMsg: `the -run pattern "^TestG$" matched nothing`,
		},
		{
			name:    "no test files",
			stdout:  lines(ev("start", "", ""), ev("output", "", "?   \tx\t[no test files]\n"), ev("skip", "", "")),
			wantMsg: "matched nothing",
		},
		{
			name: "build failed",
			stdout: []byte(`{"ImportPath":"x [x.test]","Action":"build-output","Output":"x_test.go:3:27: undefined: G\n"}
{"ImportPath":"x [x.test]","Action":"build-fail"}
` + `{"Action":"fail","Package":"x","FailedBuild":"x [x.test]"}` + "\n"),
			exitErr: exit1, wantBuild: true, wantMsg: "does not build",
		},
		{
			name:    "go fails before tests, text on stderr",
			stderr:  "go: example.com/dep@v1.0.0: module lookup disabled by GOPROXY=off\n",
			exitErr: exit1, wantMsg: "failed before running any test",
		},
		{
			name:   "skipped subtest",
			stdout: lines(ev("run", "TestG", ""), ev("run", "TestG/a", ""), ev("skip", "TestG/a", ""), ev("pass", "TestG", "")),
			ran:    2, passed: 1, skips: 1, wantMsg: "TestG/a skipped",
		},
		{
			name:    "test never finished",
			stdout:  lines(ev("run", "TestG", ""), ev("output", "TestG", "panic: boom\n"), ev("fail", "", "")),
			exitErr: exit1, ran: 1, failed: 1, wantMsg: "TestG failed",
		},
		{
			name:    "TestMain exits 1 after passing tests",
			stdout:  lines(ev("run", "TestG", ""), ev("pass", "TestG", ""), ev("output", "", "leak detected\n"), ev("fail", "", "")),
			exitErr: exit1, ran: 1, passed: 1, wantMsg: "failed outside the tests",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := evaluate(parse(tt.stdout), []byte(tt.stderr), tt.exitErr, "^TestG$", "./greet")
			if r.OK != tt.wantOK || r.BuildFailed != tt.wantBuild {
				t.Errorf("evaluate() OK, BuildFailed = %v, %v; want %v, %v (%s)", r.OK, r.BuildFailed, tt.wantOK, tt.wantBuild, r.Message)
			}
			if r.Ran != tt.ran || r.Passed != tt.passed || r.Failed != tt.failed || r.Skipped != tt.skips {
				t.Errorf("evaluate() ran/passed/failed/skipped = %d/%d/%d/%d; want %d/%d/%d/%d",
					r.Ran, r.Passed, r.Failed, r.Skipped, tt.ran, tt.passed, tt.failed, tt.skips)
			}
			if !strings.Contains(r.Message, tt.wantMsg) {
				t.Errorf("evaluate() message = %q, want it to contain %q", r.Message, tt.wantMsg)
			}
		})
	}
}

func TestFailedOutputKept(t *testing.T) {
	r := evaluate(parse(lines(ev("run", "TestG", ""), ev("output", "TestG", "    x_test.go:9: got \"a\", want \"b\"\n"), ev("fail", "TestG", ""))), nil, exit1, "", "./x")
	if !strings.Contains(r.Tests[0].Output, `got "a", want "b"`) {
		t.Errorf("Tests[0].Output = %q, want the failure text", r.Tests[0].Output)
	}
	if r := evaluate(parse(nil), []byte("undefined: G"), exit1, "", "./x"); !strings.Contains(r.Output, "undefined: G") {
		t.Errorf("Output = %q, want go's stderr", r.Output)
	}
}

func TestExpand(t *testing.T) {
	cols := []string{"TestG/plain", "TestG/empty", "TestG/shout", "TestH"}
	tests := []struct {
		declared, want, unknown []string
	}{
		{[]string{"TestG/empty"}, []string{"TestG/empty"}, nil},
		{[]string{"TestG"}, []string{"TestG/plain", "TestG/empty", "TestG/shout"}, nil},
		{[]string{"TestH", "TestG/nope"}, []string{"TestH"}, []string{"TestG/nope"}},
		{[]string{"TestGx"}, nil, []string{"TestGx"}},
	}
	for _, tt := range tests {
		want, unknown := expand(cols, tt.declared)
		if strings.Join(want, ",") != strings.Join(tt.want, ",") || strings.Join(unknown, ",") != strings.Join(tt.unknown, ",") {
			t.Errorf("expand(%v) = %v, %v; want %v, %v", tt.declared, want, unknown, tt.want, tt.unknown)
		}
	}
}

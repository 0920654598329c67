package buildfile

import (
	"errors"
	"strings"
	"testing"
)

// TestSetByName: the first ARG with a default, or the first assignment, of
// the name moves; quotes, operator, spacing and comment stay; none is an
// error.
func TestSetByName(t *testing.T) {
	tests := []struct {
		name, in, want string
		set            func([]byte, string, string) ([]byte, error)
		varName        string
	}{
		{"arg quoted", "FROM x\nARG TAG=\"v1.0.0\"\nRUN echo $TAG\n", "FROM x\nARG TAG=\"v1.1.0\"\nRUN echo $TAG\n", SetArg, "TAG"},
		{"arg bare", "ARG OTHER=1\narg TAG=v1.0.0 \n", "ARG OTHER=1\narg TAG=v1.1.0 \n", SetArg, "TAG"},
		{"arg first only", "ARG TAG=v1.0.0\nFROM y\nARG TAG=v1.0.0\n", "ARG TAG=v1.1.0\nFROM y\nARG TAG=v1.0.0\n", SetArg, "TAG"},
		{"arg no default", "ARG TAG\n", "", SetArg, "TAG"},
		{"var ?=", "VERSION ?= v1.0.0\nall:\n\techo $(VERSION)\n", "VERSION ?= v1.1.0\nall:\n\techo $(VERSION)\n", SetVar, "VERSION"},
		{"var := comment", "X=1\nVERSION:=v1.0.0 # pin\n", "X=1\nVERSION:=v1.1.0 # pin\n", SetVar, "VERSION"},
		{"var export", "export VERSION = v1.0.0\n", "export VERSION = v1.1.0\n", SetVar, "VERSION"},
		{"var other name", "VERSIONS ?= 1\n", "", SetVar, "VERSION"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.set([]byte(tt.in), tt.varName, "v1.1.0")
			if tt.want == "" {
				if err == nil {
					t.Errorf("= %q, want an error", got)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Errorf("= %q, %v, want %q", got, err, tt.want)
			}
		})
	}
}

// TestSetAtLine: the pin upgrade moves is the line the spec read it from;
// its quotes, operator, comment and line ending stay, and a value that
// refers to another variable is refused.
func TestSetAtLine(t *testing.T) {
	tests := []struct {
		name string
		set  func([]byte, int, string) ([]byte, error)
		in   string
		line int
		want string
		err  string
	}{
		{"arg quoted", SetArgAt, "FROM x\nARG TAG=\"v1.0.0\" # pin\r\nARG TAG=v0\n", 2, "FROM x\nARG TAG=\"v1.1.0\" # pin\r\nARG TAG=v0\n", ""},
		{"arg second", SetArgAt, "ARG TAG=v0\nARG TAG='v1.0.0'\n", 2, "ARG TAG=v0\nARG TAG='v1.1.0'\n", ""},
		{"arg reference", SetArgAt, "ARG V=1\nARG TAG=v${V}\n", 2, "", "refers to another variable"},
		{"arg no default", SetArgAt, "ARG TAG\n", 1, "", "not an assignment with a default value"},
		{"var", SetVarAt, "A = 1\nVERSION ?= v1.0.0 # the pin\n", 2, "A = 1\nVERSION ?= v1.1.0 # the pin\n", ""},
		{"var reference", SetVarAt, "VERSION := $(OTHER)\n", 1, "", "refers to another variable"},
		{"no line", SetVarAt, "A = 1\n", 3, "", "no line 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.set([]byte(tt.in), tt.line, "v1.1.0")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("= %q, %v; want an error saying %q", got, err, tt.err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Errorf("= %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestEditLine: one line is rewritten and keeps its ending; every other
// byte stays, a missing last newline included.
func TestEditLine(t *testing.T) {
	in := "a\r\nb\nc"
	upper := func(body []byte) (string, error) { return strings.ToUpper(string(body)), nil }
	for line, want := range map[int]string{1: "A\r\nb\nc", 2: "a\r\nB\nc", 3: "a\r\nb\nC"} {
		if got, err := EditLine([]byte(in), line, upper); err != nil || string(got) != want {
			t.Errorf("EditLine(%d) = %q, %v; want %q", line, got, err, want)
		}
	}
	if _, err := EditLine([]byte(in), 4, upper); err == nil {
		t.Error("EditLine(4) of 3 lines = nil error")
	}
	boom := errors.New("boom")
	if _, err := EditLine([]byte(in), 1, func([]byte) (string, error) { return "", boom }); !errors.Is(err, boom) {
		t.Errorf("EditLine with a failing edit = %v, want it", err)
	}
}

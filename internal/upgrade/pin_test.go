package upgrade

import "testing"

func TestSetYAMLValue(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "upstream:\n  url: x\n  ref: v1.0.0   # the pin\n", "upstream:\n  url: x\n  ref: v1.1.0   # the pin\n"},
		{"double", "upstream:\n  url: x\n  ref: \"v1.0.0\"\n", "upstream:\n  url: x\n  ref: \"v1.1.0\"\n"},
		{"single crlf", "upstream:\r\n  url: x\r\n  ref: 'v1.0.0' #c\r\n", "upstream:\r\n  url: x\r\n  ref: 'v1.1.0' #c\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SetYAMLValue([]byte(tt.in), 3, "ref", "v1.1.0")
			if err != nil || string(got) != tt.want {
				t.Errorf("SetYAMLValue() = %q, %v, want %q", got, err, tt.want)
			}
		})
	}
	if _, err := SetYAMLValue([]byte("a: b\n"), 1, "ref", "x"); err == nil {
		t.Error("SetYAMLValue(wrong key) = nil error")
	}
}

func TestSetDockerfileArg(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"quoted", "FROM x\nARG TAG=\"v1.0.0\"\nRUN echo $TAG\n", "FROM x\nARG TAG=\"v1.1.0\"\nRUN echo $TAG\n"},
		{"bare", "ARG OTHER=1\narg TAG=v1.0.0 \n", "ARG OTHER=1\narg TAG=v1.1.0 \n"},
		{"first only", "ARG TAG=v1.0.0\nFROM y\nARG TAG=v1.0.0\n", "ARG TAG=v1.1.0\nFROM y\nARG TAG=v1.0.0\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SetDockerfileArg([]byte(tt.in), "TAG", "v1.1.0")
			if err != nil || string(got) != tt.want {
				t.Errorf("SetDockerfileArg() = %q, %v, want %q", got, err, tt.want)
			}
		})
	}
	if _, err := SetDockerfileArg([]byte("ARG TAG\n"), "TAG", "x"); err == nil {
		t.Error("SetDockerfileArg(no default) = nil error")
	}
}

func TestSetMakefileVar(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"?=", "VERSION ?= v1.0.0\nall:\n\techo $(VERSION)\n", "VERSION ?= v1.1.0\nall:\n\techo $(VERSION)\n"},
		{":= comment", "X=1\nVERSION:=v1.0.0 # pin\n", "X=1\nVERSION:=v1.1.0 # pin\n"},
		{"export", "export VERSION = v1.0.0\n", "export VERSION = v1.1.0\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SetMakefileVar([]byte(tt.in), "VERSION", "v1.1.0")
			if err != nil || string(got) != tt.want {
				t.Errorf("SetMakefileVar() = %q, %v, want %q", got, err, tt.want)
			}
		})
	}
	if _, err := SetMakefileVar([]byte("VERSIONS ?= 1\n"), "VERSION", "x"); err == nil {
		t.Error("SetMakefileVar(other name) = nil error")
	}
}

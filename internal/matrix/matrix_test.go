package matrix

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUnits(t *testing.T) {
	mk := `# units
VAR := build
build: deps
	$(MAKE) image IMAGE=alpha
	@make image IMAGE=beta PUSH=1
	+${MAKE} -C . image IMAGE=gamma REGISTRY=r
	make -j2 image REGISTRY=x IMAGE=delta.v2
	# make image IMAGE=commented
	echo make image IMAGE=notmake
	$(MAKE) image-push IMAGE=nope

	make image IMAGE=after-blank
image:
	make image IMAGE=other-target
build-all:
	make image IMAGE=wrong-target
`
	path := filepath.Join(t.TempDir(), "Makefile")
	os.WriteFile(path, []byte(mk), 0o644)
	units, err := Units(path, "Makefile")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, u := range units {
		names = append(names, u.Name)
	}
	if got, want := strings.Join(names, ","), "alpha,beta,gamma,delta.v2,after-blank"; got != want {
		t.Errorf("Units() = %s, want %s", got, want)
	}
	if units[0].Line != 4 {
		t.Errorf("alpha line = %d, want 4", units[0].Line)
	}
	os.WriteFile(path, []byte("build:\n\tmake image IMAGE=a\n\tmake image IMAGE=a\n"), 0o644)
	if _, err := Units(path, "Makefile"); err == nil || !strings.Contains(err.Error(), "Makefile:3: image a is listed twice") {
		t.Errorf("Units(dup) error = %v", err)
	}
}

func TestParseChanged(t *testing.T) {
	got := ParseChanged([]byte("./a/b\n\n# c\n  d/e  \n"))
	if strings.Join(got, "|") != "a/b|d/e" {
		t.Errorf("ParseChanged() = %q", got)
	}
}

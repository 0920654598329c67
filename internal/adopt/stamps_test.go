package adopt

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/buildfile"
)

// TestReadStamps: the yq -i lines of the recipe that builds a unit, in the
// shapes cozystack's package Makefiles use, become stamp entries; what
// cannot be translated is a note naming the Makefile line and why.
func TestReadStamps(t *testing.T) {
	const build = "NAME = kamaji\nimage:\n\tdocker buildx build images/kamaji --metadata-file images/kamaji.json\n"
	tests := []struct {
		name, recipe string
		want         []stampEntry
		note         string
	}{
		{"strenv with registry", "\tREPOSITORY=\"$(REGISTRY)/kamaji\" \\\n\t\tyq -i '.kamaji.image.repository = strenv(REPOSITORY)' values.yaml\n",
			[]stampEntry{{"pkg/values.yaml", ".kamaji.image.repository", "{{.Registry}}/kamaji", "pkg/Makefile:4"}}, ""},
		{"tag at digest, unquoted", "\tTAG=$(IMAGE_TAG)@$$(yq e '.\"containerimage.digest\"' images/kamaji.json -o json -r) \\\n\t\tyq -i '.kamaji.image.tag = strenv(TAG)' values.yaml\n",
			[]stampEntry{{"pkg/values.yaml", ".kamaji.image.tag", "{{.Tag}}@{{.Digest}}", "pkg/Makefile:4"}}, ""},
		{"whole reference, quoted, --inplace", "\tIMAGE=\"$(REGISTRY)/$(NAME):$(IMAGE_TAG)@$$(yq -e -o json -r '.[\"containerimage.digest\"]' images/kamaji.json)\" \\\n\t\tyq --inplace '.migrations.image = strenv(IMAGE)' ../other/values.yaml\n",
			[]stampEntry{{"other/values.yaml", ".migrations.image", "{{.Registry}}/kamaji:{{.Tag}}@{{.Digest}}", "pkg/Makefile:4"}}, ""},
		{"list index from earlier keys", "\tREPOSITORY=\"$(REGISTRY)/kamaji\" yq -i '.k.image.repository = strenv(REPOSITORY)' values.yaml\n" +
			"\tTAG=$(IMAGE_TAG)@$$(yq e '.\"containerimage.digest\"' images/kamaji.json -o json -r) yq -i '.k.image.tag = strenv(TAG)' values.yaml\n" +
			"\tyq -i '.k.extraArgs[0] = \"--migrate-image=\" + .k.image.repository + \":\" + .k.image.tag' values.yaml\n",
			[]stampEntry{
				{"pkg/values.yaml", ".k.image.repository", "{{.Registry}}/kamaji", "pkg/Makefile:4"},
				{"pkg/values.yaml", ".k.image.tag", "{{.Tag}}@{{.Digest}}", "pkg/Makefile:5"},
				{"pkg/values.yaml", ".k.extraArgs[0]", "--migrate-image={{.Registry}}/kamaji:{{.Tag}}@{{.Digest}}", "pkg/Makefile:6"},
			}, ""},
		{"literal with a make variable, quoted key", "\tyq -i '.a[\"b.c\"] = \"v-$(NAME)\"' values.yaml\n",
			[]stampEntry{{"pkg/values.yaml", `.a["b.c"]`, "v-kamaji", "pkg/Makefile:4"}}, ""},
		{"prefix plus strenv", "\tDIGEST=$$(yq e '.\"containerimage.digest\"' images/kamaji.json -o json -r) yq -i '.op.ref = \"digest=\" + strenv(DIGEST)' values.yaml\n",
			[]stampEntry{{"pkg/values.yaml", ".op.ref", "digest={{.Digest}}", "pkg/Makefile:4"}}, ""},
		{"a command substitution", "\tD=$$(cat x.digest) yq -i '.a = strenv(D)' values.yaml\n", nil,
			"pkg/Makefile:4: cannot translate this yq line into a stamp entry (the command substitution $$(cat x.digest))"},
		{"a key read from the file", "\tyq -i '.a = .b' values.yaml\n", nil, ".b is read from the file, not stamped before"},
		{"not an assignment", "\tyq -i 'del(.a)' values.yaml\n", nil, "is not `.path = value`"},
		{"a variable set elsewhere", "\tyq -i '.a = strenv(X)' values.yaml\n", nil, "strenv(X): X is not set on the line"},
		{"another target's recipe is not read", "\nother:\n\tyq -i '.a = \"x\"' values.yaml\n", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			os.MkdirAll(filepath.Join(root, "pkg"), 0o755)
			text := build + tt.recipe
			os.WriteFile(filepath.Join(root, "pkg", "Makefile"), []byte(text), 0o644)
			m := buildfile.ParseMakefile([]byte(text), "pkg/Makefile")
			ctx := &unitCtx{root: root, dir: "pkg/images/kamaji", makefile: m, buildLine: 3}
			got, notes := ctx.readStamps()
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("readStamps() = %+v, want %+v", got, tt.want)
			}
			all := strings.Join(notes, "\n")
			if (tt.note == "") != (len(notes) == 0) || !strings.Contains(all, tt.note) {
				t.Errorf("notes = %q, want one saying %q", all, tt.note)
			}
		})
	}
}

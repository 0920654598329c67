package stamp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/cmd/cmdtest"
	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/gate/gatetest"
	"github.com/spf13/cobra"
)

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func runStamp(t *testing.T, root string, env map[string]string, args ...string) (int, string, error) {
	t.Helper()
	f := &cmdutil.Factory{Root: root, Output: "json"}
	code, out, _, err := cmdtest.Exec(context.Background(), f, func(f *cmdutil.Factory) *cobra.Command {
		return NewCmdStamp(f, func(ctx context.Context, o *Options) error {
			o.Getenv = func(k string) string { return env[k] }
			return run(ctx, o)
		})
	}, args...)
	return code, out, err
}

func values(t *testing.T, root string) string {
	b, err := os.ReadFile(filepath.Join(root, "images", "greeter", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestStamp(t *testing.T) {
	root, _ := gatetest.Greeter(t)
	gatetest.SetSection(t, root, "stamp", "  - file: images/greeter/values.yaml\n    key: .image.tag\n    format: tag@digest\n  - file: images/greeter/values.yaml\n    key: .image.repository\n    format: ref\n")
	code, out, err := runStamp(t, root, map[string]string{"REGISTRY": "ghcr.io/org", "IMAGE_TAG": "v1.0.0-1"}, "greeter", "--digest", digest)
	if code != 0 {
		t.Fatalf("stamp = exit %d, %v", code, err)
	}
	v := values(t, root)
	for _, want := range []string{"  tag: v1.0.0-1@" + digest + "  # stamped\n", "  repository: ghcr.io/org/greeter:v1.0.0-1@" + digest + "\n", "# Helm values for greeter."} {
		if !strings.Contains(v, want) {
			t.Errorf("values.yaml =\n%s\nwant %q", v, want)
		}
	}
	var res struct {
		Image, Digest, Reference string
		Stamped                  []struct{ File, Key, Old, New string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Reference != "ghcr.io/org/greeter:v1.0.0-1@"+digest || len(res.Stamped) != 2 || res.Stamped[0].Old != "v1.0.0" {
		t.Errorf("stamp -o json = %s (%v)", out, err)
	}
}

func TestStampRefusesABadDigest(t *testing.T) {
	root, _ := gatetest.Greeter(t)
	before := values(t, root)
	for _, d := range []string{"sha256:abc", "v1.0.0", "sha256:" + strings.Repeat("g", 64), "sha256:" + strings.Repeat("A", 64)} {
		code, _, err := runStamp(t, root, nil, "greeter", "--digest", d)
		if code != 2 || err == nil || !strings.Contains(err.Error(), "--digest: bad digest") {
			t.Errorf("stamp --digest %s = exit %d, %v; want exit 2", d, code, err)
		}
	}
	if code, _, _ := runStamp(t, root, nil, "greeter"); code != 2 {
		t.Errorf("stamp without --digest = exit %d, want 2", code)
	}
	if values(t, root) != before {
		t.Error("values.yaml changed")
	}
}

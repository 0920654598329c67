package image

import (
	"context"
	"os"
	"slices"
	"testing"
)

// TestStageOptions checks that build.target and build.args reach buildah
// and docker buildx as --target and --build-arg, before the context.
func TestStageOptions(t *testing.T) {
	req := Request{ContextDir: "/unit", Dockerfile: "/unit/Dockerfile", Target: "builder",
		BuildArgs: map[string]string{"VERSION": "v1.2.3", "A": "x=y"}}
	want := []string{"--target", "builder", "--build-arg", "A=x=y", "--build-arg", "VERSION=v1.2.3"}
	if got := stageOptions(req); !slices.Equal(got, want) {
		t.Fatalf("stageOptions() = %q, want %q", got, want)
	}
	if got := stageOptions(Request{}); len(got) != 0 {
		t.Errorf("stageOptions(no target, no args) = %q, want none", got)
	}
	var build []string
	fake := func(_ context.Context, _ []string, _ string, args ...string) ([]byte, error) {
		if slices.Contains(args, "build") {
			build = args
			os.WriteFile(flag(args, "--iidfile"), []byte("sha256:feed\n"), 0o644)
		}
		return nil, nil
	}
	NewBuildah(withBuildahRunner(fake)).Build(context.Background(), req)
	if i := slices.Index(build, "--target"); i < 0 || !slices.Equal(build[i:i+len(want)], want) || build[len(build)-1] != "/unit" {
		t.Errorf("buildah build args = %q, want %q before the context /unit", build, want)
	}
	build = nil
	dfake := func(_ context.Context, _ []string, _ string, args ...string) ([]byte, error) {
		if slices.Contains(args, "build") {
			build = args
		}
		return nil, nil
	}
	NewDocker(withDockerRunner(dfake), WithDockerTempDir(t.TempDir())).Build(context.Background(), req)
	if i := slices.Index(build, "--target"); i < 0 || !slices.Equal(build[i:i+len(want)], want) || build[len(build)-1] != "/unit" {
		t.Errorf("docker build args = %q, want %q before the context /unit", build, want)
	}
}

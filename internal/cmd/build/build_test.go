package build

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/gate/gatetest"
	"github.com/patchkit/patchkit/internal/image"
	"github.com/patchkit/patchkit/internal/image/imagetest"
	"github.com/patchkit/patchkit/internal/stamp"
)

// env is a fake environment for Getenv.
type env map[string]string

func (e env) get(k string) string { return e[k] }

type result struct {
	code        int
	out, errOut string
	err         error
}

// runBuild runs `patchkit build` in root against the upstream at url.
func runBuild(t *testing.T, ctx context.Context, root, url string, e env, setup func(*Options), args ...string) result {
	t.Helper()
	return runBuildOffline(t, ctx, false, root, url, e, setup, args...)
}

// runBuildOffline is runBuild with the global --offline given or not.
func runBuildOffline(t *testing.T, ctx context.Context, offline bool, root, url string, e env, setup func(*Options), args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	f := &cmdutil.Factory{IO: cmdutil.Test(&out, &errOut), Root: root, CacheDir: filepath.Join(root, ".cache"), UpstreamURL: url, Output: "json", Offline: offline}
	cmd := NewCmdBuild(f, func(ctx context.Context, o *Options) error {
		o.Getenv = e.get
		o.registryOpts = append(o.registryOpts, image.WithRetry(3, 10*time.Millisecond))
		if setup != nil {
			setup(o)
		}
		return run(ctx, o)
	})
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.ExecuteContext(ctx)
	return result{cmdutil.ExitCode(err), out.String(), errOut.String(), err}
}

type buildJSON struct {
	Image     string `json:"image"`
	Digest    string `json:"digest"`
	Reference string `json:"reference"`
	Tests     struct {
		Run, Passed, Failed int
	} `json:"tests"`
	OK        bool   `json:"ok"`
	Message   string `json:"message"`
	Builder   string `json:"builder"`
	Pushed    bool   `json:"pushed"`
	OCILayout string `json:"ociLayout"`
	Stamped   []struct {
		File, Key, New string
	} `json:"stamped"`
}

func decode(t *testing.T, r result) buildJSON {
	t.Helper()
	var b buildJSON
	if err := json.Unmarshal([]byte(r.out), &b); err != nil {
		t.Fatalf("build -o json printed %q (err %v): %v", r.out, r.err, err)
	}
	return b
}

func values(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "images", "greeter", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestNativeToLayoutAndStamp is `make demo`'s build: gate, native build to
// an OCI layout, stamp.
func TestNativeToLayoutAndStamp(t *testing.T) {
	root, url := gatetest.NativeGreeter(t)
	ctx := context.Background()
	r := runBuild(t, ctx, root, url, env{}, nil, "greeter", "--stamp")
	if r.code != 0 {
		t.Fatalf("build = exit %d, %v\n%s", r.code, r.err, r.out)
	}
	b := decode(t, r)
	if b.Image != "greeter" || b.Tests.Run != 4 || b.Tests.Passed != 4 || b.Tests.Failed != 0 || !b.OK || b.Builder != "native" || b.Pushed {
		t.Errorf("build JSON = %+v", b)
	}
	if b.Reference != "greeter:v1.0.0@"+b.Digest || !strings.HasPrefix(b.Digest, "sha256:") {
		t.Errorf("reference = %q, digest %q", b.Reference, b.Digest)
	}
	layout := filepath.Join(root, "_output", "greeter", "oci")
	if b.OCILayout != layout {
		t.Errorf("ociLayout = %q, want %q", b.OCILayout, layout)
	}
	img, err := image.ReadLayout(layout, "v1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := img.Digest(); d.String() != b.Digest {
		t.Errorf("layout holds %s, build said %s", d, b.Digest)
	}
	m, _ := img.Manifest()
	ann := m.Annotations
	if ann[image.AnnotationSource] != "https://example.com/greeter.git" || len(ann[image.AnnotationRevision]) != 40 ||
		!strings.Contains(ann[image.AnnotationPatches], "0001-greet-world.diff=") || !strings.Contains(ann[image.AnnotationPatches], ",0002-shout-trims.diff=") {
		t.Errorf("annotations = %v", ann)
	}
	if want := "tag: v1.0.0@" + b.Digest; !strings.Contains(values(t, root), want) {
		t.Errorf("values.yaml =\n%s\nwant the line %q", values(t, root), want)
	}
	if len(b.Stamped) != 1 || b.Stamped[0].Key != ".image.tag" {
		t.Errorf("stamped = %+v", b.Stamped)
	}
	// The stamp record beside values.yaml names the series the image's
	// annotation names.
	data, err := os.ReadFile(filepath.Join(root, "images", "greeter", stamp.RecordName))
	if err != nil {
		t.Fatal(err)
	}
	var rec stamp.Record
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	if e := rec.Lookup("values.yaml", ".image.tag"); e == nil || e.Digest != b.Digest || e.By != stamp.ByBuild ||
		e.Series != ann[image.AnnotationSeries] || !strings.HasPrefix(e.Series, "sha256:") || len(e.Patches) != 2 {
		t.Errorf("stamp record = %s; the series annotation is %q", data, ann[image.AnnotationSeries])
	}

	// The same inputs give the same digest; SOURCE_DATE_EPOCH another.
	again := decode(t, runBuild(t, ctx, root, url, env{}, nil, "greeter"))
	if again.Digest != b.Digest {
		t.Errorf("rebuild digest = %s, want %s", again.Digest, b.Digest)
	}
	other := decode(t, runBuild(t, ctx, root, url, env{"SOURCE_DATE_EPOCH": "1"}, nil, "greeter", "--oci-layout", t.TempDir()))
	if other.Digest == b.Digest {
		t.Errorf("SOURCE_DATE_EPOCH=1 gave the same digest %s", other.Digest)
	}
}

// TestPushRealRegistry pushes to the real docker-registry, through a proxy
// that answers 503 to the first requests: the push is retried, and the
// digest the registry serves is the stamped one.
func TestPushRealRegistry(t *testing.T) {
	reg := imagetest.StartRegistry(t)
	target, _ := url.Parse("http://" + reg.Addr)
	var seen atomic.Int32
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if seen.Add(1) <= 2 {
			http.Error(w, "try later", http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	root, up := gatetest.NativeGreeter(t)
	gatetest.SetSection(t, root, "stamp", "  - file: images/greeter/values.yaml\n    key: .image.tag\n    format: tag@digest\n  - file: images/greeter/values.yaml\n    key: .image\n    format: split\n")
	os.WriteFile(filepath.Join(root, "images", "greeter", "values.yaml"), []byte("# values\nimage:\n  repository: greeter\n  tag: v1.0.0  # stamped\n"), 0o644)
	r := runBuild(t, context.Background(), root, up, env{"REGISTRY": host + "/org", "IMAGE_TAG": "v1.0.0-p1"}, nil, "greeter", "--push", "--stamp")
	if r.code != 0 {
		t.Fatalf("build --push = exit %d: %v\n%s", r.code, r.err, r.out)
	}
	b := decode(t, r)
	if !b.Pushed || b.Reference != host+"/org/greeter:v1.0.0-p1@"+b.Digest || b.OCILayout != "" {
		t.Errorf("build JSON = %+v", b)
	}
	if seen.Load() <= 2 {
		t.Errorf("the proxy saw %d requests: the 503s were not passed", seen.Load())
	}
	// Read back from the registry itself, not through the proxy.
	ref, _ := name.ParseReference(reg.Addr + "/org/greeter:v1.0.0-p1")
	desc, err := remote.Head(ref)
	if err != nil {
		t.Fatal(err)
	}
	v := values(t, root)
	if !strings.Contains(v, "digest: "+desc.Digest.String()) || desc.Digest.String() != b.Digest {
		t.Errorf("registry has %s; values.yaml =\n%s", desc.Digest, v)
	}
	if !strings.Contains(v, "repository: "+host+"/org/greeter") || !strings.Contains(v, "tag: v1.0.0-p1") {
		t.Errorf("split stamp missing in values.yaml =\n%s", v)
	}
}

func TestRegistryDownLeavesValues(t *testing.T) {
	reg := imagetest.StartRegistry(t)
	reg.Stop()
	root, up := gatetest.NativeGreeter(t)
	before := values(t, root)
	r := runBuild(t, context.Background(), root, up, env{}, nil, "greeter", "--push", "--registry", reg.Addr, "--stamp")
	if r.code != 2 || r.err == nil || !strings.Contains(r.err.Error(), "connection refused") || !strings.Contains(r.err.Error(), "gave up after 3 attempts") {
		t.Fatalf("build with the registry down = exit %d, %v; want exit 2 and a refused connection", r.code, r.err)
	}
	if values(t, root) != before {
		t.Errorf("values.yaml changed although the push failed")
	}
}

func TestGateFailureStopsTheBuild(t *testing.T) {
	root, up := gatetest.NativeGreeter(t)
	gatetest.WriteFile(t, root, "patches/greeter/tests/patches_test.go", `package greet

import "testing"

func TestGreeterPatches(t *testing.T) {
	t.Run("loud", func(t *testing.T) {
		if got := Shout("ada"); got != "HELLO ADA" {
			t.Errorf("got %q", got)
		}
	})
}
`)
	before := values(t, root)
	r := runBuild(t, context.Background(), root, up, env{}, nil, "greeter", "--stamp")
	if r.code != 1 {
		t.Fatalf("build = exit %d, %v; want 1", r.code, r.err)
	}
	b := decode(t, r)
	if b.OK || b.Digest != "" || b.Tests.Run != 2 || b.Tests.Failed != 2 || !strings.Contains(b.Message, "gate failed: TestGreeterPatches/loud failed") {
		t.Errorf("build JSON = %+v", b)
	}
	if values(t, root) != before {
		t.Error("values.yaml changed")
	}
	if _, err := os.Stat(filepath.Join(root, "_output")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed gate still wrote %s/_output", root)
	}
}

func TestBadInput(t *testing.T) {
	root, up := gatetest.NativeGreeter(t)
	tests := []struct {
		name string
		e    env
		args []string
		want string
	}{
		{"push without registry", env{}, []string{"greeter", "--push"}, "--push needs a registry"},
		{"bad tag", env{"IMAGE_TAG": "v1:bad"}, []string{"greeter"}, `IMAGE_TAG "v1:bad" is not a valid tag`},
		{"bad epoch", env{"SOURCE_DATE_EPOCH": "yesterday"}, []string{"greeter"}, "SOURCE_DATE_EPOCH"},
		{"bad builder", env{}, []string{"greeter", "--builder", "kaniko"}, "--builder"},
		{"buildah without dockerfile", env{}, []string{"greeter", "--builder", "buildah"}, "build.dockerfile: required by the buildah builder"},
		{"no such image", env{}, []string{"nope"}, "no image"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runBuild(t, context.Background(), root, up, tt.e, nil, tt.args...)
			if r.code != 2 || r.err == nil || !strings.Contains(r.err.Error(), tt.want) {
				t.Errorf("build %v = exit %d, %v; want exit 2 with %q", tt.args, r.code, r.err, tt.want)
			}
		})
	}
	// A stamp target that cannot be written fails before anything is built.
	gatetest.SetSection(t, root, "stamp", "  - {file: images/greeter/values.yaml, key: .image.tga}\n")
	r := runBuild(t, context.Background(), root, up, env{}, nil, "greeter", "--stamp")
	if r.code != 2 || !strings.Contains(r.err.Error(), "key .image.tga not found") {
		t.Errorf("build --stamp with a bad key = exit %d, %v", r.code, r.err)
	}
	if _, err := os.Stat(filepath.Join(root, "_output")); !errors.Is(err, os.ErrNotExist) {
		t.Error("a bad stamp target still built the image")
	}
}

// TestBuildahThroughTheCommand builds a Dockerfile with the real buildah
// from the patched tree, FROM a busybox base the test makes, pushes it to
// the real registry and stamps the digest the registry has.
func TestBuildahThroughTheCommand(t *testing.T) {
	reg := imagetest.StartRegistry(t)
	bh := imagetest.NewBuildah(t)
	base := bh.Busybox("localhost/busybox:test")
	root, up := gatetest.Greeter(t)
	gatetest.WriteFile(t, root, "images/greeter/Dockerfile", "FROM "+base+"\nCOPY greet/greet.go /src/greet.go\nRUN grep -q world /src/greet.go\n")
	gatetest.SetBuild(t, root, "  builder: buildah\n  dockerfile: images/greeter/Dockerfile\n")
	setup := func(o *Options) {
		o.buildahOpts = []image.BuildahOption{image.WithBuildahStorage(bh.Root, bh.RunRoot)}
	}
	r := runBuild(t, context.Background(), root, up, env{}, setup, "greeter", "--push", "--registry", reg.Addr, "--stamp")
	if r.code != 0 {
		t.Fatalf("build = exit %d: %v\n%s", r.code, r.err, r.out)
	}
	b := decode(t, r)
	got, err := image.Fetch(context.Background(), reg.Addr+"/greeter:v1.0.0")
	if err != nil || got.String() != b.Digest || b.Builder != "buildah" {
		t.Errorf("registry has %s (%v), build said %+v", got, err, b)
	}
	if !strings.Contains(values(t, root), "tag: v1.0.0@"+got.String()) {
		t.Errorf("values.yaml =\n%s", values(t, root))
	}
}

// TestInterruptedBuild cancels the build while buildah runs a long RUN
// step: the command stops promptly and the values file is untouched.
func TestInterruptedBuild(t *testing.T) {
	bh := imagetest.NewBuildah(t)
	base := bh.Busybox("localhost/busybox:test")
	root, up := gatetest.Greeter(t)
	gatetest.WriteFile(t, root, "images/greeter/Dockerfile", "FROM "+base+"\nRUN sleep 120\n")
	gatetest.SetBuild(t, root, "  builder: buildah\n  dockerfile: images/greeter/Dockerfile\n")
	before := values(t, root)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{})
	setup := func(o *Options) {
		o.buildahOpts = []image.BuildahOption{image.WithBuildahStorage(bh.Root, bh.RunRoot)}
		o.Factory.IO.SetTTY(false, true)
		o.Factory.IO.ErrOut = writerFunc(func(p []byte) {
			if strings.Contains(string(p), "with buildah") {
				close(started)
			}
		})
	}
	go func() {
		<-started
		time.Sleep(2 * time.Second) // into the RUN step
		cancel()
	}()
	begin := time.Now()
	r := runBuild(t, ctx, root, up, env{}, setup, "greeter", "--stamp")
	if r.code != 2 || !errors.Is(r.err, context.Canceled) {
		t.Errorf("interrupted build = exit %d, %v; want exit 2 and context.Canceled", r.code, r.err)
	}
	if d := time.Since(begin); d > 60*time.Second {
		t.Errorf("the interrupted build took %v", d)
	}
	if values(t, root) != before {
		t.Error("values.yaml changed")
	}
	if _, err := os.Stat(filepath.Join(root, "_output")); !errors.Is(err, os.ErrNotExist) {
		t.Error("an interrupted build wrote _output")
	}
}

type writerFunc func([]byte)

func (w writerFunc) Write(p []byte) (int, error) { w(p); return len(p), nil }

// TestOfflineRefusesPush: --offline means no network, so --push is refused
// before anything is built, and a registry base for the native builder too.
func TestOfflineRefusesPush(t *testing.T) {
	reg := imagetest.StartRegistry(t)
	root, up := gatetest.NativeGreeter(t)
	before := values(t, root)
	r := runBuildOffline(t, context.Background(), true, root, up, env{}, nil, "greeter", "--push", "--registry", reg.Addr, "--stamp")
	if r.code != 2 || r.err == nil || !strings.Contains(r.err.Error(), "--offline forbids the network") {
		t.Fatalf("--offline build --push = exit %d, %v; want exit 2 naming --offline", r.code, r.err)
	}
	if _, err := os.Stat(filepath.Join(root, "_output")); !errors.Is(err, os.ErrNotExist) {
		t.Error("--offline build --push still built the image")
	}
	if values(t, root) != before {
		t.Error("values.yaml changed")
	}
	if _, err := image.Fetch(context.Background(), reg.Addr+"/greeter:v1.0.0"); err == nil {
		t.Error("--offline build --push pushed the image")
	}
	gatetest.SetBuild(t, root, "  builder: native\n  base: "+reg.Addr+"/busybox:test\n"+gatetest.NativeFiles)
	// Fill the upstream cache online first: --offline reads it.
	r = runBuild(t, context.Background(), root, up, env{}, nil, "greeter", "--builder", "native", "--oci-layout", t.TempDir())
	if r.code != 2 || !strings.Contains(r.err.Error(), "busybox:test") {
		t.Fatalf("build with a base the registry lacks = exit %d, %v; want exit 2 naming it", r.code, r.err)
	}
	r = runBuildOffline(t, context.Background(), true, root, up, env{}, nil, "greeter")
	if r.code != 2 || r.err == nil || !strings.Contains(r.err.Error(), "is in a registry") {
		t.Errorf("--offline build with a registry base = exit %d, %v; want exit 2", r.code, r.err)
	}
}

// TestPushFaults runs build --push --stamp through a proxy in front of the
// real docker-registry that injects a fault: what can be survived is
// pushed and stamped with the digest the registry serves; what cannot
// fails with exit 2 and leaves the values file byte for byte as it was.
func TestPushFaults(t *testing.T) {
	tests := []struct {
		name   string
		fault  imagetest.Fault
		ok     bool
		errHas string
	}{
		{"503 twice to every request", imagetest.Unavailable, true, ""},
		{"reset connections", imagetest.Reset, true, ""},
		{"never answers", imagetest.Hang, false, "within the push timeout (6s)"},
		{"201 to a manifest it drops", imagetest.LieManifest, false, "does not serve the pushed image"},
	}
	reg := imagetest.StartRegistry(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proxy := imagetest.StartProxy(t, reg.Addr, tt.fault)
			root, up := gatetest.NativeGreeter(t)
			before := values(t, root)
			// The push timeout ends the push that cannot succeed, and is a
			// hang guard where it should.
			push := "2m"
			if tt.fault == imagetest.Hang {
				push = "6s"
			}
			// A path of its own in the shared registry, which already
			// holds the same (reproducible) image under other paths.
			path := "/" + strings.ReplaceAll(tt.name, " ", "-")
			r := runBuild(t, context.Background(), root, up, env{"REGISTRY_PASSWORD": "s3cret-pass", "REGISTRY_USERNAME": "ci"}, nil,
				"greeter", "--push", "--registry", proxy.Addr+path, "--stamp", "--registry-timeout", "2s", "--push-timeout", push)
			requests, injected := proxy.Counts()
			t.Logf("%s: %d requests, %d faults injected, exit %d, %v", tt.name, requests, injected, r.code, r.err)
			if injected == 0 {
				t.Error("the proxy injected no fault")
			}
			got, ferr := image.Fetch(context.Background(), reg.Addr+path+"/greeter:v1.0.0")
			if !tt.ok {
				if r.code != 2 || r.err == nil || !strings.Contains(r.err.Error(), tt.errHas) {
					t.Errorf("build --push = exit %d, %v; want exit 2 saying %q", r.code, r.err, tt.errHas)
				}
				if r.err != nil && strings.Contains(r.err.Error(), "s3cret-pass") {
					t.Errorf("the error shows the registry password: %v", r.err)
				}
				if values(t, root) != before {
					t.Errorf("values.yaml changed although the push failed:\n%s", values(t, root))
				}
				if ferr == nil {
					t.Errorf("the registry holds greeter:v1.0.0 = %s after a failed push", got)
				}
				return
			}
			if r.code != 0 {
				t.Fatalf("build --push = exit %d, %v; want it to survive the faults", r.code, r.err)
			}
			if ferr != nil || !strings.Contains(values(t, root), "tag: v1.0.0@"+got.String()) {
				t.Errorf("registry has %s (%v); values.yaml =\n%s", got, ferr, values(t, root))
			}
		})
	}
}

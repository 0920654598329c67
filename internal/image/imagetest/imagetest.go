// Package imagetest runs the real parts the image tests need: Debian's
// docker-registry (the CNCF distribution registry) on a loopback port, and
// buildah with a private storage, in which it makes a busybox base image
// from busybox-static.
package imagetest

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Registry is a running docker-registry.
type Registry struct {
	// Addr is host:port, on 127.0.0.1.
	Addr string
	cmd  *exec.Cmd
	log  *bytes.Buffer
	done chan struct{}
}

// StartRegistry starts docker-registry with filesystem storage in a
// temporary directory, on a free port of 127.0.0.1, and stops it when the
// test ends. The binary comes from Debian's docker-registry package.
func StartRegistry(tb testing.TB) *Registry {
	tb.Helper()
	bin, err := exec.LookPath("docker-registry")
	if err != nil {
		tb.Fatalf("docker-registry not found: apt-get install docker-registry (%v)", err)
	}
	dir := tb.TempDir()
	var lastErr error
	for try := 0; try < 3; try++ {
		r, err := start(bin, dir)
		if err == nil {
			tb.Cleanup(r.Stop)
			return r
		}
		lastErr = err
	}
	tb.Fatalf("starting docker-registry: %v", lastErr)
	return nil
}

func start(bin, dir string) (*Registry, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	data := filepath.Join(dir, "data-"+strings.ReplaceAll(addr, ":", "-"))
	config := fmt.Sprintf(`version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
http:
  addr: %s
`, data, addr)
	cfgPath := filepath.Join(dir, "config-"+strings.ReplaceAll(addr, ":", "-")+".yml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o644); err != nil {
		return nil, err
	}
	r := &Registry{Addr: addr, log: &bytes.Buffer{}, done: make(chan struct{})}
	r.cmd = exec.Command(bin, "serve", cfgPath)
	r.cmd.Stdout, r.cmd.Stderr = r.log, r.log
	if err := r.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { r.cmd.Wait(); close(r.done) }()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-r.done:
			return nil, fmt.Errorf("docker-registry exited: %s", r.log.String())
		default:
		}
		resp, err := http.Get("http://" + addr + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return r, nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.Stop()
	return nil, fmt.Errorf("docker-registry on %s did not answer: %s", addr, r.log.String())
}

// Stop stops the registry (SIGTERM, then SIGKILL) and waits for it. It is
// safe to call twice; a test calls it to make the registry unreachable.
func (r *Registry) Stop() {
	select {
	case <-r.done:
		return
	default:
	}
	r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(5 * time.Second):
		r.cmd.Process.Kill()
		<-r.done
	}
}

// Buildah is a buildah storage of the test's own, removed when it ends.
type Buildah struct {
	Root, RunRoot string
	tb            testing.TB
}

// NewBuildah makes a private buildah storage (vfs driver).
func NewBuildah(tb testing.TB) *Buildah {
	tb.Helper()
	if _, err := exec.LookPath("buildah"); err != nil {
		tb.Fatalf("buildah not found: apt-get install buildah (%v)", err)
	}
	dir := tb.TempDir()
	b := &Buildah{Root: filepath.Join(dir, "root"), RunRoot: filepath.Join(dir, "run"), tb: tb}
	tb.Cleanup(func() { exec.Command("buildah", b.Global("rmi", "--all", "--force")...).Run() })
	return b
}

// Global prefixes args with the storage flags.
func (b *Buildah) Global(args ...string) []string {
	return append([]string{"--root", b.Root, "--runroot", b.RunRoot, "--storage-driver", "vfs"}, args...)
}

// Run runs buildah with the storage flags and returns its trimmed stdout.
func (b *Buildah) Run(args ...string) string {
	b.tb.Helper()
	cmd := exec.Command("buildah", b.Global(args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		b.tb.Fatalf("buildah %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return strings.TrimSpace(stdout.String())
}

// Busybox makes a base image named name (localhost/busybox:test) in the
// storage: buildah from scratch, with busybox-static as /bin/busybox and
// /bin/sh, /bin/cat, /bin/ls linking to it.
func (b *Buildah) Busybox(name string) string {
	b.tb.Helper()
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		b.tb.Fatalf("busybox not found: apt-get install busybox-static (%v)", err)
	}
	rootfs := filepath.Join(b.tb.TempDir(), "rootfs")
	os.MkdirAll(filepath.Join(rootfs, "bin"), 0o755)
	data, err := os.ReadFile(busybox)
	if err != nil {
		b.tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rootfs, "bin", "busybox"), data, 0o755); err != nil {
		b.tb.Fatal(err)
	}
	for _, l := range []string{"sh", "cat", "ls", "stat"} {
		os.Symlink("busybox", filepath.Join(rootfs, "bin", l))
	}
	c := b.Run("from", "scratch")
	b.Run("copy", c, rootfs+"/", "/")
	b.Run("config", "--cmd", "/bin/sh", "--os", "linux", c)
	b.Run("commit", "--quiet", "--timestamp", "0", c, name)
	b.Run("rm", c)
	return name
}

// Push pushes image from the storage to dest, e.g.
// docker://127.0.0.1:5000/busybox:test or oci:/dir.
func (b *Buildah) Push(image, dest string) {
	b.tb.Helper()
	b.Run("push", "--tls-verify=false", "--quiet", image, dest)
}

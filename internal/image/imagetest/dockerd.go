package imagetest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Dockerd is a docker engine of the test's own.
type Dockerd struct {
	// Host is its DOCKER_HOST: unix://<tmp>/docker.sock.
	Host string
	tb   testing.TB
}

// StartDockerd starts dockerd (Debian's docker.io) on a private socket,
// data root and exec root in a temporary directory, without iptables or a
// bridge, with the vfs storage driver, and stops it when the test ends.
func StartDockerd(tb testing.TB) *Dockerd {
	tb.Helper()
	bin, err := exec.LookPath("dockerd")
	if err != nil {
		tb.Fatalf("dockerd not found: apt-get install docker.io (%v)", err)
	}
	if _, err := exec.LookPath("docker"); err != nil {
		tb.Fatalf("docker not found: apt-get install docker.io (%v)", err)
	}
	// Short: a unix socket path has at most 107 bytes.
	dir, err := os.MkdirTemp("", "pk-dockerd-")
	if err != nil {
		tb.Fatal(err)
	}
	d := &Dockerd{Host: "unix://" + filepath.Join(dir, "docker.sock"), tb: tb}
	var log bytes.Buffer
	cmd := exec.Command(bin, "--iptables=false", "--ip6tables=false", "--bridge=none", "--storage-driver=vfs",
		"-H", d.Host, "--data-root", filepath.Join(dir, "data"), "--exec-root", filepath.Join(dir, "exec"),
		"--pidfile", filepath.Join(dir, "docker.pid"))
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("starting dockerd: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	tb.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		os.RemoveAll(dir)
	})
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			tb.Fatalf("dockerd exited: %s", log.String())
		default:
		}
		if _, err := d.run("version", "--format", "{{.Server.Version}}"); err == nil {
			return d
		}
		time.Sleep(200 * time.Millisecond)
	}
	tb.Fatalf("dockerd did not answer on %s: %s", d.Host, log.String())
	return nil
}

func (d *Dockerd) run(args ...string) (string, error) {
	cmd := exec.Command("docker", args...)
	cmd.Env = append(os.Environ(), "DOCKER_HOST="+d.Host, "DOCKER_BUILDKIT=0")
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// Run runs the docker client against the engine and returns its output.
func (d *Dockerd) Run(args ...string) string {
	d.tb.Helper()
	out, err := d.run(args...)
	if err != nil {
		d.tb.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

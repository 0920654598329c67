package image

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/patchkit/patchkit/internal/untrusted"
)

// runner runs an external tool (buildah, docker) and returns its combined
// output. It is the seam the unit tests replace.
type runner func(ctx context.Context, env []string, name string, args ...string) ([]byte, error)

// execRunner runs the tool with the process's environment plus env. A
// cancelled context interrupts it and kills it after a grace period.
func execRunner(ctx context.Context, env []string, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	if len(env) > 0 {
		cmd.Env = append(cmd.Environ(), env...)
	}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctxErr := ctx.Err(); ctxErr != nil && err != nil {
		return out.Bytes(), fmt.Errorf("%s interrupted: %w", name, ctxErr)
	}
	if err != nil {
		return out.Bytes(), &CmdError{Args: append([]string{name}, args...), Output: out.String(), Err: err}
	}
	return out.Bytes(), nil
}

// CmdError is a failed external command, with its captured output.
type CmdError struct {
	Args   []string
	Output string
	Err    error
}

func (e *CmdError) Error() string {
	out := strings.TrimSpace(e.Output)
	lines := strings.Split(out, "\n")
	if len(lines) > 30 {
		lines = append([]string{"..."}, lines[len(lines)-30:]...)
	}
	msg := fmt.Sprintf("%s: %v", strings.Join(e.Args, " "), e.Err)
	if out != "" {
		msg += "\n" + strings.Join(lines, "\n")
	}
	return untrusted.Text(msg)
}

func (e *CmdError) Unwrap() error { return e.Err }

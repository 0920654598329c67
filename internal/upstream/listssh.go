package upstream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
)

// An ssh upstream is listed through the ssh command the git CLI runs for it,
// the way git ls-remote connects: GIT_SSH_COMMAND (a shell command), else
// GIT_SSH (a program), else ssh, with the options of its variant
// (GIT_SSH_VARIANT, else told by the program's name, else asked with
// `ssh -G`). The listing so connects, authenticates and checks the host key
// as the git fetch after it does, with the user's ssh configuration, keys
// and agent; go-git's own ssh client, which listed before, knew neither
// GIT_SSH_COMMAND nor the keys, proxies and options of ~/.ssh/config, and
// wanted an agent.
// The URL is read as git's connect.c reads it (sshTarget), and the command
// is built as its fill_ssh_args builds it, for protocol v0 (no SendEnv).

// sshVariant is how an ssh program takes its options (git's ssh_variant).
type sshVariant int

const (
	variantAuto sshVariant = iota
	variantSimple
	variantSSH
	variantPlink
	variantPutty
	variantTortoisePlink
)

// sshTarget is what git makes of the ssh URL raw: the host argument
// ([user@]host, brackets removed), the port when the URL names one, and the
// path it asks git-upload-pack for. It refuses what git refuses: no path,
// and a host or path that would read as an option.
func sshTarget(raw string) (host, port, repo string, err error) {
	hostPart, repo, err := splitSSH(raw)
	if err != nil {
		return "", "", "", err
	}
	host, port = hostAndPort(hostPart)
	if strings.HasPrefix(host, "-") {
		return "", "", "", fmt.Errorf("strange hostname '%s' blocked", host)
	}
	if strings.HasPrefix(repo, "-") {
		return "", "", "", fmt.Errorf("strange pathname '%s' blocked", repo)
	}
	return host, port, repo, nil
}

// splitSSH splits an ssh URL (ssh://, git+ssh://, ssh+git://, or scp-like
// [user@]host:path) into its host part (with any user and port) and its
// path, as git's parse_connect_url does: a URL is %-decoded, a host may be
// in brackets (an scp-like one loses them here, a URL's in hostAndPort),
// and a path /~user/... starts at the tilde.
func splitSSH(raw string) (hostPart, repo string, err error) {
	if !isSSH(raw) {
		return "", "", fmt.Errorf("not an ssh URL: %s", raw)
	}
	if i := strings.Index(raw, "://"); i >= 0 {
		rest := percentDecode(raw[i+3:])
		end := bracketEnd(rest)
		slash := strings.IndexByte(rest[end:], '/')
		if slash < 0 {
			return "", "", errNoPath
		}
		hostPart, repo = rest[:end+slash], rest[end+slash:]
	} else {
		end := bracketEnd(raw)
		colon := strings.IndexByte(raw[end:], ':')
		if colon < 0 {
			return "", "", errNoPath
		}
		hostPart, repo = stripBrackets(raw[:end+colon]), raw[end+colon+1:]
	}
	if len(repo) > 1 && repo[1] == '~' {
		repo = repo[1:]
	}
	return hostPart, repo, nil
}

// errNoPath is git's answer to an ssh URL without a path.
var errNoPath = errors.New("no path specified; see 'git help pull' for valid url syntax")

// brackets finds a bracketed host at the start of s ("[...]", or
// "user@[...]"): the indexes of its brackets (git's host_end).
func brackets(s string) (open, end int, ok bool) {
	if i := strings.Index(s, "@["); i >= 0 {
		open = i + 1
	}
	if !strings.HasPrefix(s[open:], "[") {
		return 0, 0, false
	}
	j := strings.IndexByte(s[open+1:], ']')
	return open, open + 1 + j, j >= 0
}

// bracketEnd is where the host of s ends for finding the path: after a
// bracketed host, else at its start.
func bracketEnd(s string) int {
	if _, end, ok := brackets(s); ok {
		return end + 1
	}
	return 0
}

// stripBrackets removes the brackets of a bracketed host in s
// ("[host:port]", "user@[::1]") and what follows them.
func stripBrackets(s string) string {
	if open, end, ok := brackets(s); ok {
		return s[:open] + s[open+1:end]
	}
	return s
}

// hostAndPort splits the port off a host part, as git's get_host_and_port
// and get_port do: a bracketed host loses its brackets and takes the
// number after them; another takes the number after its first colon.
func hostAndPort(hostPart string) (host, port string) {
	host, after, bracketed := hostPart, hostPart, false
	if end := bracketEnd(hostPart); end > 0 {
		host, after, bracketed = stripBrackets(hostPart), hostPart[end:], true
	}
	if c := strings.IndexByte(after, ':'); c >= 0 {
		switch p := after[c+1:]; {
		case validPort(p):
			port = p
			if !bracketed {
				host = hostPart[:c]
			}
		case p == "" && !bracketed:
			host = hostPart[:c]
		}
	}
	if port == "" {
		if c := strings.IndexByte(host, ':'); c >= 0 && validPort(host[c+1:]) {
			host, port = host[:c], host[c+1:]
		}
	}
	return host, port
}

// validPort reports whether p reads whole as a port, as git's strtol test
// does: an optional sign, digits, from 0 to 65535.
func validPort(p string) bool {
	s, neg := p, false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	if s == "" {
		return false
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
		if n < 1<<20 {
			n = n*10 + int(c-'0')
		}
	}
	return n == 0 || !neg && n < 65536
}

// percentDecode decodes %XX escapes, leaving a malformed one as it is
// (git's url_decode).
func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// sqQuote quotes s for a POSIX shell as git's sq_quote_buf does: in single
// quotes, with ' and ! outside them.
func sqQuote(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\'' || c == '!' {
			b.WriteString("'\\")
			b.WriteByte(c)
			b.WriteByte('\'')
			continue
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('\'')
	return b.String()
}

// sshProgram is the ssh command git would run, whether it is a shell
// command (GIT_SSH_COMMAND), and its variant when the environment or the
// program's name tells it (variantAuto otherwise). A variable that is set
// wins even when it is empty, as in git.
func sshProgram() (prog string, shell bool, variant sshVariant) {
	prog, shell = os.LookupEnv("GIT_SSH_COMMAND")
	if !shell {
		var set bool
		if prog, set = os.LookupEnv("GIT_SSH"); !set {
			prog = "ssh"
		}
	}
	if v, ok := os.LookupEnv("GIT_SSH_VARIANT"); ok && v != "auto" {
		switch v {
		case "simple":
			return prog, shell, variantSimple
		case "plink":
			return prog, shell, variantPlink
		case "putty":
			return prog, shell, variantPutty
		case "tortoiseplink":
			return prog, shell, variantTortoisePlink
		}
		// "ssh", and any other value (git's override_ssh_variant).
		return prog, shell, variantSSH
	}
	name := prog
	if shell {
		words := splitCmdline(prog)
		if len(words) == 0 {
			return prog, shell, variantAuto
		}
		name = words[0]
	}
	switch strings.ToLower(path.Base(name)) {
	case "ssh", "ssh.exe":
		variant = variantSSH
	case "plink", "plink.exe":
		variant = variantPlink
	case "tortoiseplink", "tortoiseplink.exe":
		variant = variantTortoisePlink
	}
	return prog, shell, variant
}

// splitCmdline splits a command line into words as git's split_cmdline
// does: white space separates, single and double quotes group, a backslash
// escapes the next character. It returns nil for an unclosed quote.
func splitCmdline(s string) []string {
	var words []string
	var cur strings.Builder
	in := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == 0 && (c == ' ' || c == '\t' || c == '\n'):
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case c == '\\' && quote != '\'' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		case quote == 0 && (c == '\'' || c == '"'):
			quote, in = c, true
		case c == quote:
			quote = 0
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		return nil
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// sshOptions are the options before the host for variant, with port when
// the URL names one (git's push_ssh_options, protocol v0).
func sshOptions(variant sshVariant, port string) ([]string, error) {
	var args []string
	if variant == variantTortoisePlink {
		args = append(args, "-batch")
	}
	if port != "" {
		switch variant {
		case variantSimple:
			return nil, errors.New("ssh variant 'simple' does not support setting port")
		case variantSSH:
			args = append(args, "-p", port)
		default:
			args = append(args, "-P", port)
		}
	}
	return args, nil
}

// sshCommand is the command for prog with args, through the shell when it
// is a shell command with characters a shell reads (git's
// prepare_shell_cmd).
func sshCommand(ctx context.Context, prog string, shell bool, args ...string) *exec.Cmd {
	if shell && strings.ContainsAny(prog, "|&;<>()$`\\\"' \t\n*?[#~=%") {
		return connectCommand(ctx, "sh", append([]string{"-c", prog + ` "$@"`, prog}, args...)...)
	}
	return connectCommand(ctx, prog, args...)
}

// connectCommand is a command that connects to an upstream for a listing
// (ssh, a proxy), in the environment a fetch runs git in and in its own
// process group (ownGroup).
func connectCommand(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(fetchEnv(), traceEnv...)
	ownGroup(cmd)
	return cmd
}

// ownGroup runs cmd, which connects to an upstream for a listing (ssh, a
// proxy, and a shell before them), in its own process group, killed whole
// when the listing's context ends: a shell does not always exec the
// command it runs, and a proxy may leave its children.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
}

// isSSH reports whether git reaches the upstream raw over ssh: an ssh://,
// git+ssh:// or ssh+git:// URL, or an scp-like [user@]host:path (a colon
// before any slash).
func isSSH(raw string) bool {
	if i := strings.Index(raw, "://"); i >= 0 {
		switch raw[:i] {
		case "ssh", "git+ssh", "ssh+git":
			return true
		}
		return false
	}
	colon, slash := strings.IndexByte(raw, ':'), strings.IndexByte(raw, '/')
	return colon >= 0 && (slash < 0 || colon < slash)
}

// listSSH lists the refs of the ssh upstream raw through the user's ssh,
// as git ls-remote does with protocol v0.
func listSSH(ctx context.Context, raw string) (*packp.AdvRefs, error) {
	host, port, repo, err := sshTarget(raw)
	if err != nil {
		return nil, err
	}
	prog, shell, variant := sshProgram()
	if strings.TrimSpace(prog) == "" {
		// git runs it as it is, and fails ("unable to fork").
		return nil, errors.New("GIT_SSH_COMMAND or GIT_SSH is set but empty: git cannot run it either; unset it, or name the ssh to run")
	}
	if variant == variantAuto {
		// git asks the program whether it is OpenSSH: `-G` prints the
		// configuration for host and exits 0 there.
		probe, _ := sshOptions(variantSSH, port)
		cmd := sshCommand(ctx, prog, shell, append(append([]string{"-G"}, probe...), host)...)
		variant = variantSimple
		if cmd.Run() == nil {
			variant = variantSSH
		}
	}
	opts, err := sshOptions(variant, port)
	if err != nil {
		return nil, err
	}
	args := append(append(opts, host), "git-upload-pack "+sqQuote(repo))
	return listThrough(sshCommand(ctx, prog, shell, args...), "ssh", nil)
}

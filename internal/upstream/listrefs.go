package upstream

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/pktline"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/transport"
	gitproto "github.com/go-git/go-git/v5/plumbing/transport/git"
)

// The ref listing of a git:// or file:// upstream is read here rather than
// through go-git's session, which reads the advertisement straight from the
// socket or pipe: two reads per ref (a pkt-line's length, then its text),
// each a system call and, through go-git's context reader, a goroutine. An
// upstream with thousands of refs (a GitHub mirror keeps its refs/pull/*)
// cost 80–100 ms that way against 20–40 ms read through a buffer. http(s),
// whose body net/http already buffers, still lists through go-git; ssh
// through the user's ssh, as git does (listssh.go).
//
// The listing is protocol v0's advertisement, as go-git's: the server sends
// every ref, then the client ends the exchange with a flush packet (it
// wants nothing) and closes.

// listBuffer is the size of the listing's read buffer.
const listBuffer = 64 << 10

// listSource, when set, wraps the stream a listing is read from; a test
// seam (it counts the reads).
var listSource func(io.Reader) io.Reader

// listRefs reads the advertisement of the upstream at raw: itself for
// git://, file:// and ssh, through go-git's session otherwise. connect
// bounds opening the connection; ctx bounds the whole listing.
func (c *Cache) listRefs(ctx context.Context, raw string, connect time.Duration) (*packp.AdvRefs, error) {
	if isSSH(raw) {
		return listSSH(ctx, raw)
	}
	ep, err := transport.NewEndpoint(raw)
	if err != nil {
		return nil, err
	}
	switch ep.Protocol {
	case "git":
		return listGitDaemon(ctx, ep, connect)
	case "file":
		return listLocal(ctx, ep)
	}
	cl, err := c.transportClient(ep)
	if err != nil {
		return nil, err
	}
	sess, err := cl.NewUploadPackSession(ep, nil)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	return sess.AdvertisedReferencesContext(ctx)
}

// listGitDaemon lists the refs of a git:// upstream: the request names the
// repository and the host, as go-git's git transport sends it.
func listGitDaemon(ctx context.Context, ep *transport.Endpoint, connect time.Duration) (*packp.AdvRefs, error) {
	port := ep.Port
	if port <= 0 {
		port = gitproto.DefaultPort
	}
	addr := net.JoinHostPort(ep.Host, strconv.Itoa(port))
	host := ep.Host
	if port != gitproto.DefaultPort {
		host = addr
	}
	var req bytes.Buffer
	if err := (&packp.GitProtoRequest{RequestCommand: transport.UploadPackServiceName, Pathname: ep.Path, Host: host}).Encode(&req); err != nil {
		return nil, err
	}
	if proxy := os.Getenv("GIT_PROXY_COMMAND"); proxy != "" {
		return listProxied(ctx, proxy, ep.Host, strconv.Itoa(port), req.Bytes())
	}
	conn, err := (&net.Dialer{Timeout: connect}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	// A listing that outlives ctx is cut off: the pending read fails with
	// a timeout.
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := conn.Write(req.Bytes()); err != nil {
		return nil, err
	}
	ar, err := decodeAdvertisement(conn)
	if err == nil {
		// Wants nothing: upload-pack ends on the flush.
		pktline.NewEncoder(conn).Flush()
	}
	return advertisement(ar, err, "", "")
}

// listProxied lists the refs of a git:// upstream through the proxy command
// GIT_PROXY_COMMAND names, as git connects through it: the program run with
// the host and the port, the git protocol's request on its standard input.
func listProxied(ctx context.Context, proxy, host, port string, req []byte) (*packp.AdvRefs, error) {
	if strings.HasPrefix(host, "-") {
		return nil, fmt.Errorf("strange hostname '%s' blocked", host)
	}
	return listThrough(connectCommand(ctx, proxy, host, port), "GIT_PROXY_COMMAND", req)
}

// listLocal lists the refs of a file:// upstream with git upload-pack, as
// go-git's file transport does, in the environment a fetch runs it in
// (fetchEnv, and traceEnv).
func listLocal(ctx context.Context, ep *transport.Endpoint) (*packp.AdvRefs, error) {
	cmd := exec.CommandContext(ctx, "git", "upload-pack", "--", ep.Path)
	cmd.Env = append(fetchEnv(), traceEnv...)
	return listThrough(cmd, "git upload-pack", nil)
}

// listThrough sends req (if any) to cmd's standard input and reads the
// advertisement from its standard output (git upload-pack, or ssh or a
// proxy reaching one), ends the exchange and waits for cmd; who names it in
// an error that only its standard error explains.
func listThrough(cmd *exec.Cmd, who string, req []byte) (*packp.AdvRefs, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr tailBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// A command that took no request reads as one that listed nothing,
	// with its standard error.
	stdin.Write(req)
	ar, err := decodeAdvertisement(stdout)
	if err == nil {
		pktline.NewEncoder(stdin).Flush()
	}
	stdin.Close()
	io.Copy(io.Discard, stdout)
	cmd.Wait()
	return advertisement(ar, err, who, stderr.String())
}

// decodeAdvertisement reads a v0 upload-pack advertisement from r through a
// buffer.
func decodeAdvertisement(r io.Reader) (*packp.AdvRefs, error) {
	if listSource != nil {
		r = listSource(r)
	}
	ar := packp.NewAdvRefs()
	return ar, ar.Decode(bufio.NewReaderSize(r, listBuffer))
}

// advertisement is what decodeAdvertisement's answer ar, err says, with
// stderr the error text of the command who (git upload-pack, or ssh), read
// as go-git's session reads the answers that are not a listing:
// transport.ErrRepositoryNotFound for a repository the server says it
// lacks, transport.ErrEmptyRemoteRepository for one with no refs. Any other
// failure keeps only its text, and a network error (a timeout) its chain:
// what the upstream sends never reads as a damaged cache (AsFault's
// io.ErrUnexpectedEOF).
func advertisement(ar *packp.AdvRefs, err error, who, stderr string) (*packp.AdvRefs, error) {
	var errLine *pktline.ErrorLine
	var unexpected *packp.ErrUnexpectedData
	var netErr net.Error
	switch {
	case err == nil:
	case errors.As(err, &errLine):
		if repoNotFound(errLine.Text) {
			return nil, transport.ErrRepositoryNotFound
		}
		return nil, fmt.Errorf("the upstream refused the listing: %s", errLine.Text)
	case errors.Is(err, packp.ErrEmptyAdvRefs):
		return nil, transport.ErrEmptyRemoteRepository
	case errors.Is(err, packp.ErrEmptyInput) && repoNotFound(stderr):
		return nil, transport.ErrRepositoryNotFound
	case errors.Is(err, packp.ErrEmptyInput) && stderr != "":
		return nil, fmt.Errorf("%s: %s", who, stderr)
	case errors.Is(err, packp.ErrEmptyInput):
		return nil, errors.New("the upstream closed the connection without listing its refs")
	case errors.As(err, &unexpected) && repoNotFound(string(unexpected.Data)):
		return nil, transport.ErrRepositoryNotFound
	case errors.As(err, &netErr):
		return nil, fmt.Errorf("reading the ref listing: %w", err)
	default:
		return nil, fmt.Errorf("reading the ref listing: %s", err)
	}
	if ar.IsEmpty() {
		return nil, transport.ErrEmptyRemoteRepository
	}
	transport.FilterUnsupportedCapabilities(ar.Capabilities)
	return ar, nil
}

// repoNotFound reports whether a server's error text says the repository
// does not exist or may not be read: the texts go-git's session knows.
func repoNotFound(text string) bool {
	for _, s := range []string{
		"Repository not found.",
		"repository does not exist.",
		"does not appear to be a git repository",
		"no such repository",
		"access denied",
		"Repository does not exist or you do not have access",
		"The project you were looking for could not be found",
	} {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

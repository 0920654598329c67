package imagetest

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Fault is what a Proxy does to the requests it relays.
type Fault int

const (
	// Relay forwards every request.
	Relay Fault = iota
	// Hang accepts connections and reads requests but never answers.
	Hang
	// Unavailable answers 503 to the first two tries of every request
	// (method and path, the upload session's included), then forwards it.
	Unavailable
	// LieManifest answers 201 to a manifest PUT without forwarding it: the
	// registry never stores the manifest.
	LieManifest
	// Reset resets the connection of every fifth request: before
	// forwarding it, or, every other time, after the registry answered.
	Reset
)

// Proxy is a loopback HTTP/1.1 relay in front of a registry that injects
// a Fault. It stops when the test ends.
type Proxy struct {
	// Addr is host:port, on 127.0.0.1.
	Addr   string
	target string
	fault  Fault
	l      net.Listener
	rt     *http.Transport
	done   chan struct{}
	wg     sync.WaitGroup

	mu       sync.Mutex
	conns    map[net.Conn]bool
	tries    map[string]int
	requests int
	injected int
}

// StartProxy relays 127.0.0.1:<free port> to target (host:port) with fault.
func StartProxy(tb testing.TB, target string, fault Fault) *Proxy {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &Proxy{
		Addr: l.Addr().String(), target: target, fault: fault, l: l,
		rt:   &http.Transport{DisableKeepAlives: true, ResponseHeaderTimeout: time.Minute},
		done: make(chan struct{}), conns: map[net.Conn]bool{}, tries: map[string]int{},
	}
	p.wg.Add(1)
	go p.serve()
	tb.Cleanup(p.Stop)
	return p
}

// Stop closes the listener and every connection, and waits for the relay.
func (p *Proxy) Stop() {
	select {
	case <-p.done:
		return
	default:
	}
	close(p.done)
	p.l.Close()
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// Counts returns how many requests the proxy read and how many of them it
// injected its fault into.
func (p *Proxy) Counts() (requests, injected int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests, p.injected
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.conns[c] = true
		p.mu.Unlock()
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.handle(c)
			c.Close()
			p.mu.Lock()
			delete(p.conns, c)
			p.mu.Unlock()
		}()
	}
}

// handle relays the requests of one client connection until it closes or
// a fault ends it.
func (p *Proxy) handle(c net.Conn) {
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		n, inject := p.decide(req)
		switch {
		case !inject:
			if !p.forward(c, req, false) {
				return
			}
		case p.fault == Hang:
			<-p.done
			return
		case p.fault == Unavailable:
			io.Copy(io.Discard, req.Body)
			io.WriteString(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
		case p.fault == LieManifest:
			body, _ := io.ReadAll(req.Body)
			fmt.Fprintf(c, "HTTP/1.1 201 Created\r\nDocker-Content-Digest: sha256:%x\r\nLocation: %s\r\nContent-Length: 0\r\n\r\n", sha256.Sum256(body), req.URL.Path)
		case p.fault == Reset:
			if n%2 == 0 {
				p.forward(c, req, true)
			}
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
			return
		}
	}
}

// decide counts req and says whether the fault applies to it; n counts
// the faults injected so far.
func (p *Proxy) decide(req *http.Request) (n int, inject bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests++
	switch p.fault {
	case Hang:
		inject = true
	case Unavailable:
		key := req.Method + " " + req.URL.Path
		p.tries[key]++
		inject = p.tries[key] <= 2
	case LieManifest:
		inject = req.Method == http.MethodPut && strings.Contains(req.URL.Path, "/manifests/")
	case Reset:
		inject = p.requests%5 == 0
	}
	if inject {
		p.injected++
	}
	return p.injected, inject
}

// forward sends req to the target and its answer back to c, unless drop.
// It reports whether the connection is still usable.
func (p *Proxy) forward(c net.Conn, req *http.Request, drop bool) bool {
	req.URL.Scheme, req.URL.Host, req.RequestURI = "http", p.target, ""
	resp, err := p.rt.RoundTrip(req)
	if err != nil {
		io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		return false
	}
	defer resp.Body.Close()
	if drop {
		io.Copy(io.Discard, resp.Body)
		return false
	}
	return resp.Write(c) == nil && !resp.Close
}

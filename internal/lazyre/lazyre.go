// Package lazyre is a regular expression compiled on first use, for
// package-level patterns: compiling them all at start costs every command
// the memory and time of the patterns it never uses.
package lazyre

import (
	"regexp"
	"sync"
)

// Regexp is a pattern compiled the first time it is used. Its methods are
// regexp.Regexp's.
type Regexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

// New returns expr, to be compiled on first use; like regexp.MustCompile it
// panics then if expr does not compile (MustCompileAll, in a test, finds that
// first).
func New(expr string) *Regexp {
	r := &Regexp{expr: expr}
	mu.Lock()
	all = append(all, r)
	mu.Unlock()
	return r
}

var (
	mu  sync.Mutex
	all []*Regexp
)

// MustCompileAll compiles every pattern New has returned so far: a test of a
// package that imports the others (internal/cmd/root) calls it, so a bad
// pattern fails a test rather than a rare command's first use.
func MustCompileAll() int {
	mu.Lock()
	defer mu.Unlock()
	for _, r := range all {
		r.Regexp()
	}
	return len(all)
}

// Regexp is the compiled pattern.
func (r *Regexp) Regexp() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.expr) })
	return r.re
}

func (r *Regexp) String() string                       { return r.expr }
func (r *Regexp) MatchString(s string) bool            { return r.Regexp().MatchString(s) }
func (r *Regexp) Match(b []byte) bool                  { return r.Regexp().Match(b) }
func (r *Regexp) FindString(s string) string           { return r.Regexp().FindString(s) }
func (r *Regexp) FindStringIndex(s string) []int       { return r.Regexp().FindStringIndex(s) }
func (r *Regexp) FindStringSubmatch(s string) []string { return r.Regexp().FindStringSubmatch(s) }
func (r *Regexp) FindStringSubmatchIndex(s string) []int {
	return r.Regexp().FindStringSubmatchIndex(s)
}
func (r *Regexp) FindSubmatch(b []byte) [][]byte { return r.Regexp().FindSubmatch(b) }
func (r *Regexp) FindSubmatchIndex(b []byte) []int {
	return r.Regexp().FindSubmatchIndex(b)
}
func (r *Regexp) FindAllString(s string, n int) []string { return r.Regexp().FindAllString(s, n) }
func (r *Regexp) FindAllStringIndex(s string, n int) [][]int {
	return r.Regexp().FindAllStringIndex(s, n)
}
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.Regexp().FindAllStringSubmatch(s, n)
}
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.Regexp().ReplaceAllString(src, repl)
}
func (r *Regexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return r.Regexp().ReplaceAllStringFunc(src, repl)
}
func (r *Regexp) Split(s string, n int) []string { return r.Regexp().Split(s, n) }
func (r *Regexp) SubexpNames() []string          { return r.Regexp().SubexpNames() }
func (r *Regexp) SubexpIndex(name string) int    { return r.Regexp().SubexpIndex(name) }
func (r *Regexp) ReplaceAllLiteralString(src, repl string) string {
	return r.Regexp().ReplaceAllLiteralString(src, repl)
}

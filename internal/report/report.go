// Package report renders every stage's result as text, json, markdown or
// GitHub annotations. Stages return data; only this package formats it.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// Format is an output format.
type Format string

// The output formats.
const (
	Text     Format = "text"
	JSON     Format = "json"
	Markdown Format = "markdown"
	GitHub   Format = "github"
)

// ParseFormat validates -o.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case "":
		return Text, nil
	case Text, JSON, Markdown, GitHub:
		return f, nil
	}
	return "", fmt.Errorf("-o %q: want text, json, markdown or github", s)
}

// writeJSON prints one object for one result and an array for several, as
// DESIGN.md fixes. single says whether the command was given exactly one image.
func writeJSON[T any](w io.Writer, items []T, single bool) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if single && len(items) == 1 {
		return enc.Encode(items[0])
	}
	if items == nil {
		items = []T{}
	}
	return enc.Encode(items)
}

var userinfo = regexp.MustCompile(`(?i)([a-z][a-z0-9+.-]*://)[^/@\s]+@`)

// SecretEnv lists the environment variables whose values never appear in output.
var SecretEnv = []string{"GITHUB_TOKEN", "GH_TOKEN", "REGISTRY_PASSWORD", "REGISTRY_TOKEN", "DOCKER_PASSWORD"}

// Redact removes credentials from s: the userinfo of URLs
// (https://user:token@host becomes https://***@host) and the value of every
// variable in SecretEnv.
func Redact(s string) string {
	s = userinfo.ReplaceAllString(s, "${1}***@")
	for _, name := range SecretEnv {
		if v := os.Getenv(name); len(v) >= 4 {
			s = strings.ReplaceAll(s, v, "***")
		}
	}
	return s
}

// ghEscape escapes a GitHub workflow command's message.
func ghEscape(s string) string {
	s = strings.ReplaceAll(s, "%", "%25")
	s = strings.ReplaceAll(s, "\r", "%0D")
	return strings.ReplaceAll(s, "\n", "%0A")
}

// ghProp escapes a GitHub workflow command's property value.
func ghProp(s string) string {
	s = ghEscape(s)
	s = strings.ReplaceAll(s, ":", "%3A")
	return strings.ReplaceAll(s, ",", "%2C")
}

// mdCell escapes a markdown table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", "\\|")
	return strings.ReplaceAll(s, "\n", "<br>")
}

package upstream

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/config"
)

// Mirrors: every upstream fetch goes through git's url.<base>.insteadOf
// settings, read from git's own config files, so a CI runner that maps
// https://github.com/ to a local mirror fetches from the mirror. The cache
// key and every report keep the spec's URL.

// insteadOf is one url.<Base>.insteadOf = Prefix rule.
type insteadOf struct {
	Base, Prefix string
}

// gitConfigFiles lists git's system and global config files, in the order
// git reads them, in the environment env (os.LookupEnv): GIT_CONFIG_SYSTEM
// (default /etc/gitconfig) unless GIT_CONFIG_NOSYSTEM is true, then
// GIT_CONFIG_GLOBAL when set (empty: none), or else
// $XDG_CONFIG_HOME/git/config (default ~/.config/git/config) and
// ~/.gitconfig.
func gitConfigFiles(env func(string) (string, bool)) []string {
	get := func(k string) string { v, _ := env(k); return v }
	var files []string
	if b, err := strconv.ParseBool(get("GIT_CONFIG_NOSYSTEM")); err != nil || !b {
		if sys := get("GIT_CONFIG_SYSTEM"); sys != "" {
			files = append(files, sys)
		} else {
			files = append(files, "/etc/gitconfig")
		}
	}
	if g, ok := env("GIT_CONFIG_GLOBAL"); ok {
		if g != "" {
			files = append(files, g)
		}
		return files
	}
	home := get("HOME")
	xdg := get("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	if xdg != "" {
		files = append(files, filepath.Join(xdg, "git", "config"))
	}
	if home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"))
	}
	return files
}

// readInsteadOf returns the insteadOf rules of files, in file order. Missing
// or unreadable files are skipped, as git skips missing ones; a file that
// does not parse is skipped as well, since the fetch can still go to the
// spec's URL.
func readInsteadOf(files []string) []insteadOf {
	var rules []insteadOf
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		cfg := config.New()
		err = config.NewDecoder(fh).Decode(cfg)
		fh.Close()
		if err != nil {
			continue
		}
		for _, sec := range cfg.Sections {
			if !strings.EqualFold(sec.Name, "url") {
				continue
			}
			for _, sub := range sec.Subsections {
				for _, opt := range sub.Options {
					if strings.EqualFold(opt.Key, "insteadOf") && opt.Value != "" {
						rules = append(rules, insteadOf{Base: sub.Name, Prefix: opt.Value})
					}
				}
			}
		}
	}
	return rules
}

// rewrite applies the rule with the longest prefix of url, as git does; on
// a tie the rule read last wins. Without a match url is returned unchanged.
func rewrite(url string, rules []insteadOf) string {
	best := -1
	for i, r := range rules {
		if strings.HasPrefix(url, r.Prefix) && (best < 0 || len(r.Prefix) >= len(rules[best].Prefix)) {
			best = i
		}
	}
	if best < 0 {
		return url
	}
	return rules[best].Base + strings.TrimPrefix(url, rules[best].Prefix)
}

// envInsteadOf returns the insteadOf rules that git takes from the
// environment, in order: GIT_CONFIG_COUNT pairs of GIT_CONFIG_KEY_<n> and
// GIT_CONFIG_VALUE_<n>, each key a url.<base>.insteadOf (section and key in
// any case; the base may hold dots). git refuses to run with a count that
// is not a number or a pair that is missing; these are skipped here, as a
// config file that does not parse is.
func envInsteadOf(env func(string) (string, bool)) []insteadOf {
	v, _ := env("GIT_CONFIG_COUNT")
	n, err := strconv.Atoi(v)
	if err != nil {
		return nil
	}
	var rules []insteadOf
	for i := range n {
		key, ok := env("GIT_CONFIG_KEY_" + strconv.Itoa(i))
		value, vok := env("GIT_CONFIG_VALUE_" + strconv.Itoa(i))
		first, last := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
		if !ok || !vok || value == "" || first < 0 || first == last ||
			!strings.EqualFold(key[:first], "url") || !strings.EqualFold(key[last+1:], "insteadOf") {
			continue
		}
		rules = append(rules, insteadOf{Base: key[first+1 : last], Prefix: value})
	}
	return rules
}

// MirrorURL returns the URL a fetch of url goes to: url rewritten by the
// url.<base>.insteadOf settings of git's system and global config files,
// then of the environment's (GIT_CONFIG_COUNT), which git reads last.
func MirrorURL(url string) string {
	return rewrite(url, append(readInsteadOf(gitConfigFiles(os.LookupEnv)), envInsteadOf(os.LookupEnv)...))
}

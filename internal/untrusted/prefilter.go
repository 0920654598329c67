package untrusted

import "strings"

// clues is what one pass over a text finds that a credential pattern needs:
// a pattern whose clue is absent cannot match, so Redact does not run it (a
// regular expression over a large report is most of the cost of printing
// it). A clue may be present without a match; it is never absent with one.
type clues struct {
	userinfo bool // "://" then, before any '/', whitespace, quote or backslash, an '@'
	auth     bool // "authorization", in any case
	basic    bool // "basic", in any case
	bearer   bool // "bearer" or "token", in any case
	query    bool // '=' and one of queryCred's names, in any case
	forge    bool // gh[pousr]_, github_pat_ or glpat-
}

// queryNames are stems that each of queryCred's names contains.
var queryNames = []string{"token", "passw", "secret", "apikey", "api_key", "sig", "x-amz-credential"}

// findClues scans s once. The case-insensitive patterns fold two non-ASCII
// letters into ASCII ones (U+212A KELVIN SIGN is k, U+017F LONG S is s); a
// text holding either gets all of those patterns run.
func findClues(s string) clues {
	var c clues
	eq, name, folds := false, false, false
	// A "://" whose scan would start and end inside the last one's finds
	// what that one found: only one from scanned on is scanned again (the
	// last stop may be the first '/' of the next "://").
	scanned := 0
	for i := 0; i < len(s); i++ {
		rest := s[i:]
		switch s[i] {
		case ':':
			if !c.userinfo && i >= scanned && strings.HasPrefix(rest, "://") {
				at, stop := userinfoEnd(rest[3:])
				c.userinfo, scanned = at, i+1+stop
			}
		case '=':
			eq = true
		case 'a', 'A':
			c.auth = c.auth || hasPrefixFold(rest, "authorization")
			name = name || hasPrefixFold(rest, "apikey") || hasPrefixFold(rest, "api_key")
		case 'b', 'B':
			c.basic = c.basic || hasPrefixFold(rest, "basic")
			c.bearer = c.bearer || hasPrefixFold(rest, "bearer")
		case 't', 'T':
			if hasPrefixFold(rest, "token") {
				c.bearer, name = true, true
			}
		case 'p', 'P':
			name = name || hasPrefixFold(rest, "passw")
		case 's', 'S':
			name = name || hasPrefixFold(rest, "secret") || hasPrefixFold(rest, "sig")
		case 'x', 'X':
			name = name || hasPrefixFold(rest, "x-amz-credential")
		case 'g':
			c.forge = c.forge || isForgePrefix(rest)
		case 0xE2: // U+212A is E2 84 AA
			folds = folds || strings.HasPrefix(rest, "\u212a")
		case 0xC5: // U+017F is C5 BF
			folds = folds || strings.HasPrefix(rest, "\u017f")
		}
	}
	if folds {
		c.auth, c.basic, c.bearer, name = true, true, true, true
	}
	c.query = eq && name
	return c
}

// userinfoEnd scans what follows "://" as userinfo's character class does:
// it reports whether an '@' comes before a '/', whitespace (\s is ASCII in
// RE2), a quote or a backslash, and how far it scanned.
func userinfoEnd(s string) (bool, int) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '@':
			return true, i
		case '/', '\t', '\n', '\f', '\r', ' ', '"', '\'', '\\':
			return false, i
		}
	}
	return false, len(s)
}

// hasPrefixFold reports whether s starts with word (lower-case ASCII) in
// any ASCII case.
func hasPrefixFold(s, word string) bool {
	if len(s) < len(word) {
		return false
	}
	for i := 0; i < len(word); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != word[i] {
			return false
		}
	}
	return true
}

// isForgePrefix reports whether s starts as forgeToken's alternatives do.
func isForgePrefix(s string) bool {
	if len(s) >= 4 && s[1] == 'h' && strings.IndexByte("pousr", s[2]) >= 0 && s[3] == '_' {
		return true
	}
	return strings.HasPrefix(s, "github_pat_") || strings.HasPrefix(s, "glpat-")
}

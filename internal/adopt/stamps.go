package adopt

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/patchkit/patchkit/internal/buildfile"
	"github.com/patchkit/patchkit/internal/lazyre"
	"github.com/patchkit/patchkit/internal/stamp/expr"
)

// A package Makefile stamps the image it builds with yq, in the recipe that
// builds it:
//
//	REPOSITORY="$(REGISTRY)/kamaji" \
//		yq -i '.kamaji.image.repository = strenv(REPOSITORY)' values.yaml
//	TAG=$(IMAGE_TAG)@$$(yq e '."containerimage.digest"' images/kamaji.json -o json -r) \
//		yq -i '.kamaji.image.tag = strenv(TAG)' values.yaml
//	yq -i '.kamaji.extraArgs[0] = "--migrate-image=" + .kamaji.image.repository + ":" + .kamaji.image.tag' values.yaml
//
// init reads those lines into stamp entries: the key is the yq path, the
// value a template ({{.Registry}}/kamaji, {{.Tag}}@{{.Digest}}). A line it
// cannot translate is reported with its file:line and why.

// stampEntry is one stamp: target the spec will hold.
type stampEntry struct {
	File  string // relative to the root
	Key   string // a yq path, as expr.Path.String writes it
	Value string // a value template
	Where string // Makefile:line
}

// readStamps reads the yq -i lines of the recipe that builds the unit.
// notes say which it could not translate, with file:line and why.
func (u *unitCtx) readStamps() (stamps []stampEntry, notes []string) {
	if u.makefile == nil || u.buildLine == 0 {
		return nil, nil
	}
	end := u.makefile.RuleAfter(u.buildLine)
	set := map[string]int{} // file + key -> index in stamps
	for _, l := range u.makefile.Recipes {
		if l.N > u.buildLine && l.N < end && isSedInPlace(l.Text) {
			notes = append(notes, fmt.Sprintf("%s:%d: stamps a file with sed -i, which init does not translate: write a stamp entry for it by hand (an entry without key for a file that holds only the value), or make it a yq -i line", u.makefile.File, l.N))
			continue
		}
		if l.N <= u.buildLine || l.N >= end || !isYqInPlace(l.Text) {
			continue
		}
		where := fmt.Sprintf("%s:%d", u.makefile.File, l.N)
		st, err := u.translate(l.Text, stamps, set)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s: cannot translate this yq line into a stamp entry (%v): add it to the spec by hand", where, err))
			continue
		}
		st.Where = where
		id := st.File + " " + st.Key
		if i, dup := set[id]; dup {
			stamps[i] = st // the later write wins, as in the recipe
			continue
		}
		set[id] = len(stamps)
		stamps = append(stamps, st)
	}
	return stamps, notes
}

var sedInPlaceRE = lazyre.New(`(^|[\s;&|(])(sed\s+(-[A-Za-z]*\s+)*-i|\$\(SED_INPLACE\))`)

// isSedInPlace reports whether a recipe line edits a file in place with
// sed (sed -i, sed -i.bak, $(SED_INPLACE)).
func isSedInPlace(text string) bool { return sedInPlaceRE.MatchString(text) }

// isYqInPlace reports whether a recipe line runs yq -i (or --inplace).
func isYqInPlace(text string) bool {
	f := buildfile.Words(text)
	for i, w := range f {
		if w == "yq" {
			for _, x := range f[i+1:] {
				if x == "-i" || x == "--inplace" {
					return true
				}
			}
		}
	}
	return false
}

// translate reads one `[VAR=value ...] yq -i 'PATH = RHS' FILE` line.
func (u *unitCtx) translate(text string, done []stampEntry, set map[string]int) (stampEntry, error) {
	words := buildfile.Words(text)
	env := map[string]string{}
	i := 0
	for ; i < len(words) && words[i] != "yq"; i++ {
		k, v, ok := strings.Cut(words[i], "=")
		if !ok || !buildfile.IsName(k) {
			return stampEntry{}, fmt.Errorf("%q runs before yq", words[i])
		}
		env[k] = buildfile.Unquote(v)
	}
	var exprText string
	var files []string
	for i++; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "-i" || w == "--inplace" || w == "e" || w == "eval":
		case w == "-o" || w == "-p" || w == "--output-format" || w == "--input-format":
			i++
		case strings.HasPrefix(w, "-"):
			return stampEntry{}, fmt.Errorf("yq flag %s", w)
		case exprText == "":
			exprText = buildfile.Unquote(w)
		default:
			files = append(files, buildfile.Unquote(w))
		}
	}
	if len(files) != 1 {
		return stampEntry{}, fmt.Errorf("yq edits %d files; a stamp entry names one", len(files))
	}
	if strings.Contains(files[0], "$") {
		return stampEntry{}, fmt.Errorf("the file %s is computed", files[0])
	}
	file := path.Join(path.Dir(u.makefile.File), files[0])
	lhs, rhs, ok := splitAssign(exprText)
	if !ok {
		return stampEntry{}, fmt.Errorf("%q is not `.path = value`", exprText)
	}
	p, err := expr.ParsePath(lhs)
	if err != nil {
		return stampEntry{}, fmt.Errorf("the path %s: %w", lhs, err)
	}
	var val strings.Builder
	for _, term := range splitTop(rhs, '+') {
		t, err := u.term(term, file, env, done, set)
		if err != nil {
			return stampEntry{}, err
		}
		val.WriteString(t)
	}
	if val.Len() == 0 {
		return stampEntry{}, errors.New("an empty value")
	}
	return stampEntry{File: file, Key: p.String(), Value: val.String()}, nil
}

// term translates one term of a yq sum: strenv(VAR), "text", or .path of
// a value stamped earlier in the recipe.
func (u *unitCtx) term(t, file string, env map[string]string, done []stampEntry, set map[string]int) (string, error) {
	t = strings.TrimSpace(t)
	switch {
	case strings.HasPrefix(t, "strenv(") && strings.HasSuffix(t, ")"):
		name := strings.TrimSuffix(strings.TrimPrefix(t, "strenv("), ")")
		v, ok := env[name]
		if !ok {
			return "", fmt.Errorf("strenv(%s): %s is not set on the line", name, name)
		}
		return u.template(v)
	case len(t) >= 2 && t[0] == '"' && t[len(t)-1] == '"':
		return u.template(strings.ReplaceAll(t[1:len(t)-1], `\"`, `"`))
	case strings.HasPrefix(t, "."):
		p, err := expr.ParsePath(t)
		if err != nil {
			return "", fmt.Errorf("the term %s: %w", t, err)
		}
		if i, ok := set[file+" "+p.String()]; ok {
			return done[i].Value, nil
		}
		return "", fmt.Errorf("%s is read from the file, not stamped before in the recipe", t)
	}
	return "", fmt.Errorf("the yq term %s", t)
}

// template translates a shell value with make references into a value
// template: $(REGISTRY) is {{.Registry}}, $(IMAGE_TAG) {{.Tag}}, a command
// substitution that reads containerimage.digest {{.Digest}}, a Makefile
// variable with a constant value that value.
func (u *unitCtx) template(v string) (string, error) {
	var b strings.Builder
	for v != "" {
		i := strings.IndexByte(v, '$')
		if i < 0 {
			b.WriteString(v)
			break
		}
		b.WriteString(v[:i])
		v = v[i:]
		if strings.HasPrefix(v, "$$(") {
			j := matchParen(v, 2)
			if j < 0 {
				return "", errors.New("an unterminated $$(")
			}
			if !strings.Contains(v[:j], "containerimage.digest") {
				return "", fmt.Errorf("the command substitution %s", v[:j+1])
			}
			b.WriteString("{{.Digest}}")
			v = v[j+1:]
			continue
		}
		name, rest, ok := buildfile.MakeRef(v)
		if !ok {
			return "", fmt.Errorf("the shell or make reference in %q", v)
		}
		v = rest
		switch name {
		case "REGISTRY":
			b.WriteString("{{.Registry}}")
		case "IMAGE_TAG":
			b.WriteString("{{.Tag}}")
		default:
			val, _, err := u.makefile.Value(name)
			if err != nil || strings.ContainsAny(val, "$`") {
				return "", fmt.Errorf("the make variable %s, which is not a constant", name)
			}
			b.WriteString(val)
		}
	}
	if strings.Contains(b.String(), "{{") && !strings.Contains(b.String(), "{{.") {
		return "", errors.New("literal {{ in the value")
	}
	return b.String(), nil
}

// matchParen returns the index of the ) that closes the ( at v[open], or -1.
func matchParen(v string, open int) int {
	depth := 0
	var quote byte
	for i := open; i < len(v); i++ {
		c := v[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// splitAssign splits a yq expression at its top-level `=` (not ==, |=, +=).
func splitAssign(e string) (lhs, rhs string, ok bool) {
	parts := splitTop(e, '=')
	if len(parts) != 2 {
		return "", "", false
	}
	lhs, rhs = strings.TrimSpace(parts[0]), strings.TrimSpace(parts[1])
	if lhs == "" || rhs == "" || strings.HasSuffix(lhs, "|") || strings.HasSuffix(lhs, "+") || strings.HasSuffix(lhs, "!") {
		return "", "", false
	}
	return lhs, rhs, true
}

// splitTop splits s at sep outside quotes, brackets and parentheses.
func splitTop(s string, sep byte) []string {
	var out []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"':
			quote = c
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		case c == sep && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// imageRepository is the repository the recipe pushes the unit as: X of a
// stamped {{.Registry}}/X, else the unit directory's name. Where a value
// holds {{.Registry}}/X:{{.Tag}}@{{.Digest}}, that is {{.Reference}}.
func imageRepository(stamps []stampEntry, dir string) string {
	repo := path.Base(dir)
	for _, st := range stamps {
		rest, ok := strings.CutPrefix(st.Value, "{{.Registry}}/")
		if i := strings.Index(st.Value, "{{.Registry}}/"); !ok && i > 0 {
			rest, ok = st.Value[i+len("{{.Registry}}/"):], true
		}
		if !ok {
			continue
		}
		if i := strings.IndexAny(rest, ":@{ "); i >= 0 {
			rest = rest[:i]
		}
		if rest != "" {
			repo = rest
			break
		}
	}
	ref := "{{.Registry}}/" + repo + ":{{.Tag}}@{{.Digest}}"
	for i := range stamps {
		stamps[i].Value = strings.ReplaceAll(stamps[i].Value, ref, "{{.Reference}}")
	}
	return repo
}

package adopt

import "testing"

func TestRegexGlob(t *testing.T) {
	tests := []struct {
		re, want string
		ok       bool
	}{
		{`v1\.15\.`, "v1.15.*", true},
		{`v1\.15\.[0-9]+$`, "", false},
		{`release-1\.2`, "release-1.2*", true},
		{`v2\.0\.0$`, "v2.0.0", true},
		{`v(1|2)`, "", false},
		{``, "", false},
	}
	for _, tt := range tests {
		got, ok := regexGlob(tt.re)
		if got != tt.want || ok != tt.ok {
			t.Errorf("regexGlob(%q) = %q, %v; want %q, %v", tt.re, got, ok, tt.want, tt.ok)
		}
	}
}

func TestSpelling(t *testing.T) {
	tests := []struct{ value, pin, want string }{
		{"v1.15.10", "v1.15.10", "pin"},
		{"1.15.10", "v1.15.10", "bare"},
		{"v1.33.3", "1.33.3", "v"},
		{"1.15.1", "v1.15.10", ""},
		{"facbc36", "facbc36", "pin"},
		{"vfacbc36", "facbc36", ""},
		{"", "v1", ""},
	}
	for _, tt := range tests {
		if got := spelling(tt.value, tt.pin); got != tt.want {
			t.Errorf("spelling(%q, %q) = %q, want %q", tt.value, tt.pin, got, tt.want)
		}
	}
}

func TestSedInPlace(t *testing.T) {
	for text, want := range map[string]bool{
		"\tsed -i.bak -E \"s|image: x|image: $$IMG|\" files/a.yaml":                   true,
		"\t$(SED_INPLACE) -e \"s/ARG VERSION=.*/ARG VERSION=1/\" images/x/Dockerfile": true,
		"\tsed -e s/a/b/ x > y":        false,
		"\tyq -i '.a = 1' values.yaml": false,
	} {
		if got := isSedInPlace(text); got != want {
			t.Errorf("isSedInPlace(%q) = %v, want %v", text, got, want)
		}
	}
}

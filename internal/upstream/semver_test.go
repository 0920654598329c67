package upstream

import (
	"strings"
	"testing"
)

func TestReleases(t *testing.T) {
	names := []string{
		"v1.15.10", "v1.15.2", "v1.15.9", "v1.15.10-rc.1", "v1.15.10-rc.10", "v1.15.10-rc.2",
		"v1.15.10-alpha", "v1.15.10-alpha.1", "v1.14.99", "v1.15.x", "v1.15.01", "latest", "v1.15.3+build.5",
	}
	tags := make([]Tag, len(names))
	for i, n := range names {
		tags[i] = Tag{Name: n}
	}
	tests := []struct {
		name    string
		pattern string
		want    string
		wantErr bool
	}{
		{name: "one minor series", pattern: "v1.15.*",
			want: "v1.15.2 v1.15.3+build.5 v1.15.9 v1.15.10-alpha v1.15.10-alpha.1 v1.15.10-rc.1 v1.15.10-rc.2 v1.15.10-rc.10 v1.15.10"},
		{name: "everything", pattern: "*",
			want: "v1.14.99 v1.15.2 v1.15.3+build.5 v1.15.9 v1.15.10-alpha v1.15.10-alpha.1 v1.15.10-rc.1 v1.15.10-rc.2 v1.15.10-rc.10 v1.15.10"},
		{name: "exact", pattern: "v1.14.99", want: "v1.14.99"},
		{name: "none", pattern: "v2.*", want: ""},
		{name: "bad pattern", pattern: "v1.[", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Releases(tags, tt.pattern)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Releases(%q) = %v, wantErr %v", tt.pattern, err, tt.wantErr)
			}
			var g []string
			for _, r := range got {
				g = append(g, r.Name)
			}
			if strings.Join(g, " ") != tt.want {
				t.Errorf("Releases(%q) = %s, want %s", tt.pattern, strings.Join(g, " "), tt.want)
			}
		})
	}
}

func TestCompareVersions(t *testing.T) {
	tests := []struct {
		a, b   string
		want   int
		wantOK bool
	}{
		{"v1.2.3", "v1.2.3", 0, true},
		{"v1.2.3", "1.2.3", 0, true},
		{"v1.2.3", "v1.2.4", -1, true},
		{"v1.10.0", "v1.9.0", 1, true},
		{"v1.0.0-rc.1", "v1.0.0", -1, true},
		{"v1.0.0-1", "v1.0.0-alpha", -1, true},
		{"v1.0.0-alpha", "v1.0.0-alpha.1", -1, true},
		{"v1.0.0+a", "v1.0.0+b", 0, true},
		{"v1.0", "v1.0.0", 0, false},
		{"v1.0.0-", "v1.0.0", 0, false},
		{"v1.0.0-01", "v1.0.0", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.a+"_vs_"+tt.b, func(t *testing.T) {
			got, ok := CompareVersions(tt.a, tt.b)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("CompareVersions(%q, %q) = %d, %v; want %d, %v", tt.a, tt.b, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

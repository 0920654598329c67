package root

import (
	"runtime/debug"
	"testing"
)

// TestVersionOf: --version of a binary built without make's -ldflags reads
// the build information: go install …@v1.2.3 records the module version,
// go build in a checkout the VCS revision.
func TestVersionOf(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{"go install of a release", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, true, "v1.2.3"},
		{"go build in a checkout", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: vcs("vcs.revision", "0123456789abcdef0123", "vcs.time", "2026-12-07T10:00:00Z", "vcs.modified", "true")}, true,
			"devel 0123456789ab+dirty (2026-12-07T10:00:00Z)"},
		{"no vcs stamp", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "dev"},
		{"no build info", nil, false, "dev"},
	} {
		if got := versionOf(tc.bi, tc.ok); got != tc.want {
			t.Errorf("%s: versionOf() = %q, want %q", tc.name, got, tc.want)
		}
	}
}

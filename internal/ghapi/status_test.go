package ghapi

import "testing"

func TestParseItem(t *testing.T) {
	tests := []struct {
		in          string
		owner, repo string
		n           int
		pr, ok      bool
	}{
		{"https://github.com/kubeovn/kube-ovn/pull/6834", "kubeovn", "kube-ovn", 6834, true, true},
		{"https://github.com/kubeovn/kube-ovn/pull/6834/files#diff-1", "kubeovn", "kube-ovn", 6834, true, true},
		{"https://github.com/kubeovn/kube-ovn/issues/6823", "kubeovn", "kube-ovn", 6823, false, true},
		{"https://github.com/kubeovn/kube-ovn/issues/6823#issuecomment-1", "kubeovn", "kube-ovn", 6823, false, true},
		{"https://github.com/kubeovn/kube-ovn/commit/a229dec", "", "", 0, false, false},
		{"https://github.com/kubeovn/kube-ovn/pull/x", "", "", 0, false, false},
		{"https://github.com/kubeovn/kube-ovn/pull/0", "", "", 0, false, false},
		{"https://gitlab.com/o/r/-/merge_requests/3", "", "", 0, false, false},
		{"no", "", "", 0, false, false},
	}
	for _, tt := range tests {
		owner, repo, n, pr, ok := ParseItem(tt.in, "")
		if owner != tt.owner || repo != tt.repo || n != tt.n || pr != tt.pr || ok != tt.ok {
			t.Errorf("ParseItem(%q) = %q %q %d %v %v, want %q %q %d %v %v", tt.in, owner, repo, n, pr, ok, tt.owner, tt.repo, tt.n, tt.pr, tt.ok)
		}
	}
}

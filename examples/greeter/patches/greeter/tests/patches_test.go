package greet

import "testing"

// TestGreeterPatches is the regression test the platform injects into
// greeter's tree. Each subtest is owned by the patch whose Test: header names it.
func TestGreeterPatches(t *testing.T) {
	tests := []struct {
		name string
		got  func() string
		want string
	}{
		{"plain_name", func() string { return Greet("Ada") }, "Hello, Ada!"},
		{"empty_name", func() string { return Greet("") }, "Hello, world!"},
		{"shout_trims", func() string { return Shout("  ada ") }, "HELLO, ADA!"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.got(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

package upgrade

import "testing"

func TestSetYAMLValue(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "upstream:\n  url: x\n  ref: v1.0.0   # the pin\n", "upstream:\n  url: x\n  ref: v1.1.0   # the pin\n"},
		{"double", "upstream:\n  url: x\n  ref: \"v1.0.0\"\n", "upstream:\n  url: x\n  ref: \"v1.1.0\"\n"},
		{"single crlf", "upstream:\r\n  url: x\r\n  ref: 'v1.0.0' #c\r\n", "upstream:\r\n  url: x\r\n  ref: 'v1.1.0' #c\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SetYAMLValue([]byte(tt.in), 3, "ref", "v1.1.0")
			if err != nil || string(got) != tt.want {
				t.Errorf("SetYAMLValue() = %q, %v, want %q", got, err, tt.want)
			}
		})
	}
	if _, err := SetYAMLValue([]byte("a: b\n"), 1, "ref", "x"); err == nil {
		t.Error("SetYAMLValue(wrong key) = nil error")
	}
}

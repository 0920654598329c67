package untrusted

import (
	"strings"
	"testing"
)

func TestInlineMarkdown(t *testing.T) {
	tests := []struct {
		name, in string
		absent   []string
		want     string
	}{
		{name: "mention", in: "thanks @octocat and @kubeovn/maintainers", absent: []string{"@octocat", "@kubeovn"}},
		{name: "image", in: "![x](https://evil.example/pixel.png)", absent: []string{"!["}},
		{name: "html image", in: `<img src="https://evil.example/p.png">`, absent: []string{"<img"}},
		{name: "cell break", in: "a | b\nc", want: `a \| b c`},
		{name: "workflow command", in: "::set-output name=x::y", want: ": :set-output name=x::y"},
		{name: "plain", in: "fix(controller): requeue VMI migration", want: `fix(controller): requeue VMI migration`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := InlineMarkdown(tt.in)
			if tt.want != "" && got != tt.want {
				t.Errorf("InlineMarkdown(%q) = %q, want %q", tt.in, got, tt.want)
			}
			for _, a := range tt.absent {
				if strings.Contains(got, a) {
					t.Errorf("InlineMarkdown(%q) = %q, still holds %q", tt.in, got, a)
				}
			}
		})
	}
}

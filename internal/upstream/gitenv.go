package upstream

import (
	"os"
	"strings"
)

// GitEnv is the environment later stages run the git CLI with on a cache:
// no user or system configuration (so no aliases, diff drivers, rename,
// prefix or colour settings change the output), literal pathspecs, no
// replace objects, no prompts, and the C locale.
func GitEnv() []string {
	env := []string{}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_") || strings.HasPrefix(kv, "LC_") || strings.HasPrefix(kv, "LANG=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_LITERAL_PATHSPECS=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_NO_REPLACE_OBJECTS=1",
		"LC_ALL=C",
	)
}

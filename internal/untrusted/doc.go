// Package untrusted is the one exit for text patchkit did not write itself:
// what a git server, a registry, the GitHub API or a subprocess says, and
// every error message. Text redacts credentials in every form they take and
// neutralises CI workflow commands, so that nothing a server echoes can leak
// a secret or steer a GitHub Actions run.
package untrusted

// Package arch holds no code: its test checks the layering of patchkit's
// packages (docs/architecture.md), so that a stage that starts to import a
// command, a renderer or a later stage fails CI instead of drifting.
package arch

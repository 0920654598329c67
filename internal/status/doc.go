// Package status gathers the patch debt of a repository's image units: each
// unit's pin and how far behind upstream it is, each patch's age, verdict at
// the newest release (internal/obsolete) and upstream link and state, and
// the number of carried patches over the repository's git history.
package status

// Package stamp writes a built image's digest into YAML files (Helm values)
// at the keys an image spec names, keeping each file's comments, order and
// style, atomically, and only once every target is known to be writable.
package stamp

// Package release runs the build-and-publish sequence of one image unit:
// check, apply, gate, build, publish and stamp, each stage's typed result
// passed to the next (as ko's resolver runs build then publish, outside its
// cobra command).
package release

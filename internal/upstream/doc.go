// Package upstream keeps a bare, lock-protected cache of each upstream git
// repository and reads refs, tags, trees and history from it without checkouts.
package upstream

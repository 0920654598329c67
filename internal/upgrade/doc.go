// Package upgrade moves an image's pin to a newer upstream ref and carries its
// series forward (drop what upstream carries, refresh what moved, three-way
// merge what conflicts), and rewrites patches in canonical form (refresh).
package upgrade

// Package upgrade moves an image's pin to a newer upstream ref and carries its
// series forward (drop what upstream carries, refresh what moved, three-way
// merge what conflicts), rendering what it keeps in canonical form (package
// refresh).
package upgrade

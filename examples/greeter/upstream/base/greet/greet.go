// Package greet builds greetings.
package greet

import "strings"

// Greet returns a greeting for name.
func Greet(name string) string {
	return "Hello, " + name + "!"
}

// Shout greets loudly.
func Shout(name string) string {
	return strings.ToUpper(Greet(name))
}

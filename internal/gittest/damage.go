package gittest

import (
	"os"
	"testing"
)

// FlipBit damages the file at path: one bit (0x40) of the byte at offset
// at flipped, in place; a negative at counts from the end (-1 is the last
// byte).
func FlipBit(tb testing.TB, path string, at int64) {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if at < 0 {
		fi, err := f.Stat()
		if err != nil {
			tb.Fatal(err)
		}
		at += fi.Size()
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, at); err != nil {
		tb.Fatal(err)
	}
	b[0] ^= 0x40
	if _, err := f.WriteAt(b, at); err != nil {
		tb.Fatal(err)
	}
}

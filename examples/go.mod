// This module only keeps the examples (an upstream snapshot and injected
// tests that compile inside the patched upstream) out of patchkit's ./...
module example.com/patchkit-examples

go 1.26

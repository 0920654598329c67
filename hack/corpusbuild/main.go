// Command corpusbuild rebuilds a corpus history file (GO_CORPUS_HISTORY) in a
// bare repository (the argument) and prints "NODE COMMIT" per node; a helper
// of hack/cut-corpus.sh.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/patchkit/patchkit/internal/obsolete/corpus"
)

func main() {
	if len(os.Args) != 2 || os.Getenv("GO_CORPUS_HISTORY") == "" {
		fmt.Fprintln(os.Stderr, "usage: GO_CORPUS_HISTORY=FILE corpusbuild GITDIR")
		os.Exit(2)
	}
	nodes, err := corpus.ReadHistory(os.Getenv("GO_CORPUS_HISTORY"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ids, err := corpus.Build(context.Background(), os.Args[1], nodes)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for n := 1; n < len(ids); n++ {
		fmt.Println(n, ids[n])
	}
}

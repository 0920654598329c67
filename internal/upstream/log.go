package upstream

import (
	"container/heap"
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// ErrStop ends a Log walk early, without error, when fn returns it.
var ErrStop = errors.New("stop the walk")

// Log walks the history of from (any ref Resolve takes) through all parents,
// newest committer time first, passing each commit to fn once. stop, if not
// nil, marks boundaries: the walk does not enter a commit for which it returns
// true (fn does not see it, and its parents are not followed through it). A
// shallow commit of the cache is the end of its history: it is passed to fn
// but its missing parents are not followed. fn returning ErrStop ends the walk
// cleanly; any other error ends it with that error.
func (c *Cache) Log(ctx context.Context, from string, stop func(commit string) bool, fn func(*object.Commit) error) error {
	// A partial cache's boundaries are patchkit's own, not the end of history.
	if err := c.Deepen(ctx); err != nil {
		return err
	}
	id, err := c.Resolve(from)
	if err != nil {
		return err
	}
	err = c.log(ctx, plumbing.NewHash(id), stop, fn)
	if errors.Is(err, ErrStop) {
		return nil
	}
	if err != nil {
		return c.objectFault(c.errorf("walking the history of %s in %s: %w", from, c.redacted, err))
	}
	return nil
}

func (c *Cache) log(ctx context.Context, from plumbing.Hash, stop func(string) bool, fn func(*object.Commit) error) error {
	shallow := map[plumbing.Hash]bool{}
	var start *object.Commit
	err := c.withStore(func(s *store) error {
		list, err := s.st.Shallow()
		if err != nil {
			return fmt.Errorf("reading the shallow list: %w", err)
		}
		for _, h := range list {
			shallow[h] = true
		}
		start, err = readCommit(s.st, from)
		return err
	})
	if err != nil {
		return err
	}
	q := &commitQueue{start}
	seen := map[plumbing.Hash]bool{from: true}
	for q.Len() > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		cm := heap.Pop(q).(*object.Commit)
		if stop != nil && stop(cm.Hash.String()) {
			continue
		}
		if err := fn(cm); err != nil {
			return err
		}
		if shallow[cm.Hash] {
			continue
		}
		for _, p := range cm.ParentHashes {
			if seen[p] {
				continue
			}
			seen[p] = true
			var parent *object.Commit
			err := c.withStore(func(s *store) error {
				var err error
				parent, err = readCommit(s.st, p)
				return err
			})
			if errors.Is(err, plumbing.ErrObjectNotFound) {
				return fmt.Errorf("parent %s of %s is missing, and %s is not a shallow boundary: %w", p, cm.Hash, cm.Hash, err)
			}
			if err != nil {
				return fmt.Errorf("reading commit %s: %w", p, err)
			}
			heap.Push(q, parent)
		}
	}
	return nil
}

// commitQueue orders commits newest committer time first, then by id.
type commitQueue []*object.Commit

func (q commitQueue) Len() int { return len(q) }
func (q commitQueue) Less(i, j int) bool {
	ti, tj := q[i].Committer.When, q[j].Committer.When
	if !ti.Equal(tj) {
		return ti.After(tj)
	}
	return q[i].Hash.String() < q[j].Hash.String()
}
func (q commitQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *commitQueue) Push(x any)   { *q = append(*q, x.(*object.Commit)) }
func (q *commitQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

package upstream

import (
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// objectError is an object of the cache that could not be read although the
// cache refers to it: missing, or not reading back as the object it names.
// Cache methods turn it into a *CacheFaultError.
type objectError struct {
	id  plumbing.Hash
	err error
}

func (e *objectError) Error() string { return fmt.Sprintf("reading object %s: %v", e.id, e.err) }
func (e *objectError) Unwrap() error { return e.err }

// errHashMismatch is an object whose content does not hash to its id.
var errHashMismatch = errors.New("content does not match the object id")

// readVerified reads object h of type t (plumbing.AnyObject for any) in full
// and checks that its content hashes to h, so that a flipped byte or a
// truncated pack is a fault, never wrong content. Every error is an
// *objectError.
func readVerified(st storer.EncodedObjectStorer, t plumbing.ObjectType, h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	obj, err := st.EncodedObject(t, h)
	if err != nil {
		return 0, nil, &objectError{h, err}
	}
	r, err := obj.Reader()
	if err != nil {
		return 0, nil, &objectError{h, err}
	}
	defer r.Close()
	data, err := readSized(r, obj.Size())
	if err != nil {
		return 0, nil, &objectError{h, err}
	}
	sum := sha1.New()
	sum.Write([]byte(obj.Type().String() + " " + strconv.Itoa(len(data)) + "\x00"))
	sum.Write(data)
	var got plumbing.Hash
	copy(got[:], sum.Sum(nil))
	if got != h {
		return 0, nil, &objectError{h, errHashMismatch}
	}
	return obj.Type(), data, nil
}

// readSized reads all of r, which must hold size bytes: into one buffer of
// that size, not one grown from 512 bytes.
func readSized(r io.Reader, size int64) ([]byte, error) {
	if size < 0 || size > maxObjectBuffer {
		data, err := io.ReadAll(r)
		if err == nil && int64(len(data)) != size {
			err = fmt.Errorf("read %d bytes of %d", len(data), size)
		}
		return data, err
	}
	data := make([]byte, size)
	n, err := io.ReadFull(r, data)
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read %d bytes of %d", n, size)
	}
	if err != nil {
		return nil, err
	}
	var one [1]byte
	if m, _ := io.ReadFull(r, one[:]); m > 0 {
		return nil, fmt.Errorf("read more than %d bytes", size)
	}
	return data, nil
}

// maxObjectBuffer bounds the buffer readSized allocates up front from an
// object's stated size; a larger object is read as it comes.
const maxObjectBuffer = 256 << 20

// readTree reads and verifies tree h.
func readTree(st storer.EncodedObjectStorer, h plumbing.Hash) (*object.Tree, error) {
	_, data, err := readVerified(st, plumbing.TreeObject, h)
	if err != nil {
		return nil, err
	}
	t, err := object.DecodeTree(st, verified(plumbing.TreeObject, h, data))
	if err != nil {
		return nil, &objectError{h, err}
	}
	return t, nil
}

// readCommit reads and verifies commit h.
func readCommit(st storer.EncodedObjectStorer, h plumbing.Hash) (*object.Commit, error) {
	_, data, err := readVerified(st, plumbing.CommitObject, h)
	if err != nil {
		return nil, err
	}
	c, err := object.DecodeCommit(st, verified(plumbing.CommitObject, h, data))
	if err != nil {
		return nil, &objectError{h, err}
	}
	return c, nil
}

// verifiedObject is an object whose content has been checked against its
// id: go-git's decoders take its id rather than hashing it again.
type verifiedObject struct {
	plumbing.MemoryObject
	id plumbing.Hash
}

func (o *verifiedObject) Hash() plumbing.Hash { return o.id }

func verified(t plumbing.ObjectType, id plumbing.Hash, data []byte) *verifiedObject {
	o := &verifiedObject{id: id}
	o.SetType(t)
	o.Write(data)
	return o
}

// readBlob reads and verifies blob h.
func readBlob(st storer.EncodedObjectStorer, h plumbing.Hash) ([]byte, error) {
	_, data, err := readVerified(st, plumbing.BlobObject, h)
	return data, err
}

// objectFault turns an *objectError in err's chain into a *CacheFaultError of
// c; other errors pass through.
func (c *Cache) objectFault(err error) error {
	var oe *objectError
	if !errors.As(err, &oe) {
		return err
	}
	return c.fault(oe.id.String(), err)
}

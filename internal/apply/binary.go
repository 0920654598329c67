package apply

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"strconv"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// blobID is git's object id of a blob with content data, in the hash whose
// hex length is hexLen (40: SHA-1, 64: SHA-256).
func blobID(data []byte, hexLen int) string {
	var h hash.Hash
	if hexLen == sha256.Size*2 {
		h = sha256.New()
	} else {
		h = sha1.New()
	}
	h.Write([]byte("blob " + strconv.Itoa(len(data)) + "\x00"))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

func isFullOID(s string) bool {
	if len(s) != sha1.Size*2 && len(s) != sha256.Size*2 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

func isNullOID(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '0' {
			return false
		}
	}
	return true
}

// applyBinary is git's apply_binary: it checks the preimage against the full
// index line and applies the binary fragment for this direction. It returns
// the new content, or a message saying why it cannot.
func applyBinary(fp *filePatch, img []byte, reverse bool, maxBytes int64) ([]byte, string) {
	name := fp.name()
	if fp.oldName != "" {
		name = fp.oldName
	}
	if !isFullOID(fp.oldOID) || !isFullOID(fp.newOID) || len(fp.oldOID) != len(fp.newOID) {
		return nil, fmt.Sprintf("cannot apply binary patch to '%s' without full index line", name)
	}
	if fp.oldName != "" {
		if id := blobID(img, len(fp.oldOID)); id != fp.oldOID {
			return nil, fmt.Sprintf("the patch applies to '%s' (%s), which does not match the current contents", name, id)
		}
	} else if len(img) > 0 {
		return nil, fmt.Sprintf("the patch applies to an empty '%s' but it is not empty", name)
	}
	if isNullOID(fp.newOID) {
		return []byte{}, ""
	}
	if !fp.hasBinaryData {
		return nil, fmt.Sprintf("missing binary patch data for '%s'", name)
	}
	if fp.binary == nil {
		if reverse {
			return nil, fmt.Sprintf("cannot reverse-apply a binary patch without the reverse hunk to '%s'", name)
		}
		return nil, fmt.Sprintf("missing binary patch data for '%s'", name)
	}
	var opts []gitdiff.ApplyOption
	if maxBytes > 0 {
		opts = append(opts, gitdiff.WithMaxBinaryFragmentBytes(maxBytes))
	}
	var out bytes.Buffer
	ap := gitdiff.NewBinaryApplier(&out, bytes.NewReader(img), opts...)
	if err := ap.ApplyFragment(fp.binary); err != nil {
		return nil, fmt.Sprintf("binary patch does not apply to '%s': %v", name, err)
	}
	if err := ap.Close(); err != nil {
		return nil, fmt.Sprintf("binary patch does not apply to '%s': %v", name, err)
	}
	result := out.Bytes()
	if id := blobID(result, len(fp.newOID)); id != fp.newOID {
		return nil, fmt.Sprintf("binary patch to '%s' creates incorrect result (expecting %s, got %s)", name, fp.newOID, id)
	}
	return result, ""
}

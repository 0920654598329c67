package obsolete

import (
	"bytes"
	"context"
	"encoding/gob"
	"path/filepath"

	"github.com/patchkit/patchkit/internal/upstream"
)

// listingName names the listing memo's directory in the cache (upstream's
// DerivedDir): the tags the last online listing of the upstream returned.
const listingName = "listing"

// listingFormat names the listing memo's format.
const listingFormat = "patchkit obsolete tag listing 1"

// listing is the listing memo's one entry.
type listing struct {
	Format string
	URL    string
	Tags   []upstream.RemoteTag
}

// listedTags returns the upstream's tags: online, as it lists them now
// (Cache.RemoteTags), recorded in the cache's listing memo; offline, as the
// memo recorded them (ok is false without a whole entry for this URL, and
// nothing reaches the network). The entry is checksummed and written
// atomically, like the history memo; failing to write it never fails the
// run.
func listedTags(ctx context.Context, c *upstream.Cache) (tags []upstream.RemoteTag, ok bool, err error) {
	path := filepath.Join(c.DerivedDir(listingName), "tags")
	if c.Offline() {
		var l listing
		data, hit := readMemo(path)
		if !hit || gob.NewDecoder(bytes.NewReader(data)).Decode(&l) != nil || l.Format != listingFormat || l.URL != c.URL() {
			return nil, false, nil
		}
		return l.Tags, true, nil
	}
	if tags, err = c.RemoteTags(ctx); err != nil {
		return nil, false, err
	}
	var data bytes.Buffer
	if gob.NewEncoder(&data).Encode(listing{Format: listingFormat, URL: c.URL(), Tags: tags}) == nil {
		writeMemo(path, data.Bytes())
	}
	return tags, true, nil
}

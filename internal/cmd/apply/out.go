package apply

import (
	"github.com/patchkit/patchkit/internal/tree"
)

// MarkerFile is the ownership record beside every tree apply writes (see
// tree.OwnerRecord); the tree itself carries nothing of patchkit's.
const MarkerFile = "." + "NAME" + tree.OwnerSuffix

// outTarget says where the patched tree may go: --out, --force and the
// paths it must never replace. Check and Write are the tree stage's.
type outTarget = tree.OutPolicy

// Package caps encodes Linux file capabilities as the security.capability
// extended attribute that setcap writes, for image layers.
package caps

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
)

// XattrName is the extended attribute that holds a file's capabilities.
const XattrName = "security.capability"

// PAXKey is the tar PAX record that carries the attribute in a layer, as GNU
// tar, containerd and buildah read it.
const PAXKey = "SCHILY.xattr." + XattrName

// The vfs_cap_data header of linux/capability.h.
const (
	revision2      = 0x02000000 // VFS_CAP_REVISION_2: two 32-bit words of each set
	flagsEffective = 0x000001   // VFS_CAP_FLAGS_EFFECTIVE
)

// names maps each capability of linux/capability.h to its number.
var names = map[string]int{
	"chown": 0, "dac_override": 1, "dac_read_search": 2, "fowner": 3,
	"fsetid": 4, "kill": 5, "setgid": 6, "setuid": 7, "setpcap": 8,
	"linux_immutable": 9, "net_bind_service": 10, "net_broadcast": 11,
	"net_admin": 12, "net_raw": 13, "ipc_lock": 14, "ipc_owner": 15,
	"sys_module": 16, "sys_rawio": 17, "sys_chroot": 18, "sys_ptrace": 19,
	"sys_pacct": 20, "sys_admin": 21, "sys_boot": 22, "sys_nice": 23,
	"sys_resource": 24, "sys_time": 25, "sys_tty_config": 26, "mknod": 27,
	"lease": 28, "audit_write": 29, "audit_control": 30, "setfcap": 31,
	"mac_override": 32, "mac_admin": 33, "syslog": 34, "wake_alarm": 35,
	"block_suspend": 36, "audit_read": 37, "perfmon": 38, "bpf": 39,
	"checkpoint_restore": 40,
}

// Parse returns the number of a capability named as setcap or as a container
// runtime names it: cap_net_bind_service, CAP_NET_BIND_SERVICE and
// NET_BIND_SERVICE are the same.
func Parse(name string) (int, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	n = strings.TrimPrefix(n, "cap_")
	if v, ok := names[n]; ok {
		return v, nil
	}
	return 0, fmt.Errorf("unknown capability %q (want a name like cap_net_bind_service)", name)
}

// Xattr returns the security.capability value that `setcap <caps>=ep` writes:
// a version 2 vfs_cap_data with the capabilities permitted and the effective
// flag set, so that the file runs with them. It returns nil for no capabilities.
func Xattr(capabilities []string) ([]byte, error) {
	if len(capabilities) == 0 {
		return nil, nil
	}
	var permitted uint64
	for _, c := range capabilities {
		n, err := Parse(c)
		if err != nil {
			return nil, err
		}
		permitted |= 1 << uint(n)
	}
	// struct vfs_cap_data { __le32 magic_etc; struct { __le32 permitted, inheritable; } data[2]; }
	b := make([]byte, 20)
	binary.LittleEndian.PutUint32(b[0:], revision2|flagsEffective)
	binary.LittleEndian.PutUint32(b[4:], uint32(permitted))
	binary.LittleEndian.PutUint32(b[8:], 0)
	binary.LittleEndian.PutUint32(b[12:], uint32(permitted>>32))
	binary.LittleEndian.PutUint32(b[16:], 0)
	return b, nil
}

// Decode returns the names (cap_x, sorted) of the permitted set of a
// security.capability value and whether its effective flag is set.
func Decode(b []byte) (capabilities []string, effective bool, err error) {
	if len(b) < 4 {
		return nil, false, fmt.Errorf("security.capability is %d bytes, too short", len(b))
	}
	magic := binary.LittleEndian.Uint32(b)
	var permitted uint64
	switch magic &^ flagsEffective {
	case 0x01000000: // revision 1: one word
		if len(b) != 12 {
			return nil, false, fmt.Errorf("security.capability v1 is %d bytes, want 12", len(b))
		}
		permitted = uint64(binary.LittleEndian.Uint32(b[4:]))
	case revision2, 0x03000000: // revision 3 adds a rootid
		if len(b) != 20 && len(b) != 24 {
			return nil, false, fmt.Errorf("security.capability is %d bytes, want 20 or 24", len(b))
		}
		permitted = uint64(binary.LittleEndian.Uint32(b[4:])) | uint64(binary.LittleEndian.Uint32(b[12:]))<<32
	default:
		return nil, false, fmt.Errorf("security.capability has unknown revision %#x", magic)
	}
	for name, n := range names {
		if permitted&(1<<uint(n)) != 0 {
			capabilities = append(capabilities, "cap_"+name)
		}
	}
	sort.Strings(capabilities)
	return capabilities, magic&flagsEffective != 0, nil
}

module github.com/containernetworking/plugins

go 1.17

require (
	github.com/Microsoft/hcsshim v0.9.6
	github.com/alexflint/go-filemutex v1.2.0
	github.com/buger/jsonparser v1.1.1
	github.com/containernetworking/cni v1.1.2
	github.com/coreos/go-iptables v0.6.0
	github.com/coreos/go-systemd/v22 v22.5.0
	github.com/d2g/dhcp4 v0.0.0-20170904100407-a1d1b6c41b1c
	github.com/d2g/dhcp4client v1.0.0
	github.com/d2g/dhcp4server v0.0.0-20181031114812-7d4a0a7f59a5
	github.com/godbus/dbus/v5 v5.1.0
	github.com/mattn/go-shellwords v1.0.12
	github.com/networkplumbing/go-nft v0.2.0
	github.com/onsi/ginkgo v1.16.5
	github.com/onsi/gomega v1.24.2
	github.com/safchain/ethtool v0.2.0
	github.com/vishvananda/netlink v1.2.1-beta.2
	golang.org/x/sys v0.4.0
)

require (
	github.com/Microsoft/go-winio v0.4.17 // indirect
	github.com/containerd/cgroups v1.0.1 // indirect
	github.com/fsnotify/fsnotify v1.4.9 // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/golang/groupcache v0.0.0-20200121045136-8c9f03a8e57e // indirect
	github.com/google/go-cmp v0.5.9 // indirect
	github.com/nxadm/tail v1.4.8 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/sirupsen/logrus v1.8.1 // indirect
	github.com/vishvananda/netns v0.0.0-20210104183010-2eb08e3e575f // indirect
	go.opencensus.io v0.22.3 // indirect
	golang.org/x/net v0.4.0 // indirect
	golang.org/x/text v0.5.0 // indirect
	gopkg.in/tomb.v1 v1.0.0-20141024135613-dd632973f1e7 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

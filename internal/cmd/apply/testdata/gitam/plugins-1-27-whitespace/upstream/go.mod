module github.com/containernetworking/plugins

go 1.20

require (
	github.com/Microsoft/hcsshim v0.9.9
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
	github.com/networkplumbing/go-nft v0.3.0
	github.com/onsi/ginkgo/v2 v2.9.2
	github.com/onsi/gomega v1.27.6
	github.com/opencontainers/selinux v1.11.0
	github.com/safchain/ethtool v0.3.0
	github.com/vishvananda/netlink v1.2.1-beta.2
	golang.org/x/sys v0.7.0
)

require (
	github.com/Microsoft/go-winio v0.6.0 // indirect
	github.com/containerd/cgroups v1.1.0 // indirect
	github.com/go-logr/logr v1.2.4 // indirect
	github.com/go-task/slim-sprig v0.0.0-20230315185526-52ccab3ef572 // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/golang/groupcache v0.0.0-20210331224755-41bb18bfe9da // indirect
	github.com/google/go-cmp v0.5.9 // indirect
	github.com/google/pprof v0.0.0-20230323073829-e72429f035bd // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/sirupsen/logrus v1.9.0 // indirect
	github.com/vishvananda/netns v0.0.4 // indirect
	go.opencensus.io v0.24.0 // indirect
	golang.org/x/mod v0.9.0 // indirect
	golang.org/x/net v0.8.0 // indirect
	golang.org/x/text v0.8.0 // indirect
	golang.org/x/tools v0.7.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

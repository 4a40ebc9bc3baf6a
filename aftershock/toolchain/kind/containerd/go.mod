module aftershock.local/toolchain/kind/containerd

go 1.26.3

require github.com/containerd/containerd/v2 v2.3.4 // indirect

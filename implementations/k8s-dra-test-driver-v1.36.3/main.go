// Command dra-test-driver is Kubernetes' own e2e DRA test driver
// (k8s.io/kubernetes/test/e2e/dra/test-driver/app) at the version go.mod pins, built here so that
// it runs as a kubelet plugin DaemonSet: Kubernetes ships no image of it.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/test/e2e/dra/test-driver/app"
)

func main() {
	os.Exit(cli.Run(app.NewCommand()))
}

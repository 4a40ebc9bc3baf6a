module aftershock.io/tests/readers

go 1.25.0

require (
	github.com/jstemmer/go-junit-report/v2 v2.1.0
	github.com/onsi/ginkgo/v2 v2.34.0
	gotest.tools/gotestsum v1.13.0
)

require (
	github.com/Masterminds/semver/v3 v3.4.0 // indirect
	github.com/bitfield/gotestdox v0.2.2 // indirect
	github.com/fatih/color v1.18.0 // indirect
	github.com/mattn/go-colorable v0.1.13 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	golang.org/x/mod v0.35.0 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/sys v0.43.0 // indirect
	golang.org/x/term v0.35.0 // indirect
	golang.org/x/text v0.36.0 // indirect
	golang.org/x/tools v0.44.0 // indirect
)

// Command readers reads a submission's files as their own readers do, and prints what they
// read, as JSON: junit_01.xml decoded into Ginkgo's own JUnit types (the types Ginkgo writes
// and merges its reports with), and results.json scanned by gotestsum's testjson package and
// parsed by go-junit-report's go test -json parser. aftershock's tests compare that with
// what the run judged.
package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jstemmer/go-junit-report/v2/parser/gotest"
	"github.com/onsi/ginkgo/v2/reporters"
	"gotest.tools/gotestsum/testjson"
)

type quiet struct{}

func (quiet) Event(testjson.TestEvent, *testjson.Execution) error { return nil }
func (quiet) Err(string) error                                    { return nil }

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func ginkgo(dir string) map[string]any {
	f, err := os.Open(filepath.Join(dir, "junit_01.xml"))
	must(err)
	defer f.Close()
	var report reporters.JUnitTestSuites
	must(xml.NewDecoder(f).Decode(&report))
	var suites, cases []map[string]any
	for _, s := range report.TestSuites {
		suites = append(suites, map[string]any{"name": s.Name, "package": s.Package,
			"tests": s.Tests, "skipped": s.Skipped, "failures": s.Failures,
			"errors": s.Errors, "disabled": s.Disabled, "time": s.Time,
			"timestamp": s.Timestamp, "properties": len(s.Properties.Properties)})
		for _, c := range s.TestCases {
			cases = append(cases, map[string]any{"name": c.Name, "classname": c.Classname,
				"status": c.Status, "time": c.Time, "skipped": c.Skipped != nil,
				"failure": c.Failure != nil, "error": c.Error != nil})
		}
	}
	return map[string]any{"tests": report.Tests, "disabled": report.Disabled,
		"errors": report.Errors, "failures": report.Failures, "time": report.Time,
		"suites": suites, "cases": cases}
}

func gotestsum(dir string) map[string]any {
	f, err := os.Open(filepath.Join(dir, "results.json"))
	must(err)
	defer f.Close()
	run, err := testjson.ScanTestOutput(testjson.ScanConfig{Stdout: f, Handler: quiet{}})
	must(err)
	names := func(cases []testjson.TestCase) []string {
		out := []string{}
		for _, c := range cases {
			out = append(out, string(c.Test))
		}
		return out
	}
	packages := map[string]any{}
	for _, name := range run.Packages() {
		p := run.Package(name)
		packages[name] = map[string]any{"total": p.Total, "passed": names(p.Passed),
			"failed": names(p.Failed), "skipped": names(p.Skipped),
			"result": string(p.Result()), "elapsed": p.Elapsed().Seconds()}
	}
	return map[string]any{"total": run.Total(), "failed": names(run.Failed()),
		"skipped": names(run.Skipped()), "errors": run.Errors(), "packages": packages}
}

func goJunitReport(dir string) map[string]any {
	f, err := os.Open(filepath.Join(dir, "results.json"))
	must(err)
	defer f.Close()
	report, err := gotest.NewJSONParser().Parse(f)
	must(err)
	packages := map[string]any{}
	for _, p := range report.Packages {
		tests := map[string]string{}
		for _, t := range p.Tests {
			tests[t.Name] = t.Result.String()
		}
		packages[p.Name] = map[string]any{"tests": tests, "seconds": p.Duration.Seconds()}
	}
	return map[string]any{"successful": report.IsSuccessful(), "packages": packages}
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: readers SUBMISSION_DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	out, err := json.Marshal(map[string]any{"ginkgo": ginkgo(dir),
		"gotestsum": gotestsum(dir), "goJunitReport": goJunitReport(dir)})
	must(err)
	fmt.Println(string(out))
}

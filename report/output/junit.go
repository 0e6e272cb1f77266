package output

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"

	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// JUnit writes a JUnit XML report to Path (bulkhead run/report --junit FILE), the file GitLab,
// Jenkins and most CI systems read as test results: one testsuite for the run, whose first
// testcase is the run's validity (it fails when the load generator fell behind, so a run without
// claims still fails visibly) and then one testcase per claim. A claim that holds passes; one
// that does not hold, is inconclusive or is not measurable fails (the exit code treats them the
// same), its failure's type the verdict and its message the reason with the numbers. Each claim's
// testcase names the scenario file and line it is written at.
type JUnit struct {
	// Path is the file to write (atomically; its folder must exist).
	Path string
}

// Name is "junit".
func (JUnit) Name() string { return "junit" }

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  string          `xml:"system-out,omitempty"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Line      int           `xml:"line,attr,omitempty"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Type    string `xml:"type,attr"`
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// Write writes the report for s to j.Path.
func (j JUnit) Write(s *model.Summary, dir string) error {
	b, err := junitXML(s, dir)
	if err != nil {
		return err
	}
	return rundir.WriteFile(j.Path, b)
}

// junitXML renders the JUnit report of s, read from dir.
func junitXML(s *model.Summary, dir string) ([]byte, error) {
	v := s.Verdict
	class := s.Scenario
	suite := junitSuite{Name: fmt.Sprintf("%s: run %s", s.Scenario, s.RunID),
		Properties: []junitProperty{{"run_dir", dir}, {"run_id", s.RunID}, {"outcome", v.Outcome}, {"schema_version", strconv.Itoa(s.SchemaVersion)}},
		SystemOut:  Headline(s)}
	valid := junitCase{Name: "the run is valid", Classname: class + ".run", Time: "0",
		SystemOut: "The load generator kept to its schedule: no send dropped, send lag p99 within the limit (report.md, Validity)."}
	if !s.Valid {
		valid.Failure = &junitFailure{Type: "invalid", Message: "the run is invalid, so no claim is judged: " + strings.Join(s.Invalid, "; "),
			Text: strings.Join(s.Invalid, "\n")}
	}
	suite.Cases = append(suite.Cases, valid)
	if v.Note != "" {
		suite.Cases = append(suite.Cases, junitCase{Name: "the claims were read", Classname: class + ".claims", Time: "0",
			Failure: &junitFailure{Type: "note", Message: v.Note}})
	}
	for _, c := range v.Claims {
		file, line := splitSource(c.Source)
		tc := junitCase{Name: c.ID, Classname: class + ".claims", File: file, Line: line, Time: "0",
			SystemOut: fmt.Sprintf("says: %s\n%s", oneLine(c.Says), evidence(c))}
		if c.Verdict != model.VerdictHolds {
			tc.Failure = &junitFailure{Type: c.Verdict, Message: fmt.Sprintf("%s: %s", c.Verdict, oneLine(c.Reason)),
				Text: fmt.Sprintf("claim %s %s\nsays: %s\n%s\n", c.ID, c.Verdict, oneLine(c.Says), evidence(c))}
		}
		suite.Cases = append(suite.Cases, tc)
	}
	for _, tc := range suite.Cases {
		suite.Tests++
		if tc.Failure != nil {
			suite.Failures++
		}
	}
	doc := junitSuites{Name: "bulkhead " + s.Scenario, Tests: suite.Tests, Failures: suite.Failures, Suites: []junitSuite{suite}}
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}

// splitSource splits a claim's "file:line" (the line is 0 when there is none).
func splitSource(src string) (string, int) {
	i := strings.LastIndex(src, ":")
	if i < 0 {
		return src, 0
	}
	n, err := strconv.Atoi(src[i+1:])
	if err != nil {
		return src, 0
	}
	return src[:i], n
}

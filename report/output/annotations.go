package output

import (
	"fmt"
	"io"
	"strings"

	"github.com/bulkheadlab/bulkhead/report/model"
)

// Annotations prints one line per claim that did not hold (does not hold, inconclusive, not
// measurable) located at the claim in its scenario file, for a CI system to annotate the file
// with: "file:line: claim ID verdict: says · evidence" (the form compilers print, which editors
// and CI problem matchers read), or, with GitHub set, GitHub Actions' workflow command
// "::error file=F,line=L,title=...::...". A claim without a known source is printed without a
// location.
type Annotations struct {
	// W receives the lines; nil prints nothing.
	W io.Writer
	// GitHub prints GitHub Actions workflow commands instead of file:line lines.
	GitHub bool
}

// Name is "annotations".
func (Annotations) Name() string { return "annotations" }

// Write prints the annotations of s's claims.
func (a Annotations) Write(s *model.Summary, _ string) error {
	if a.W == nil {
		return nil
	}
	for _, c := range s.Verdict.Claims {
		if c.Verdict == model.VerdictHolds {
			continue
		}
		var line string
		if a.GitHub {
			line = githubAnnotation(c)
		} else {
			line = annotation(c)
		}
		if _, err := fmt.Fprintln(a.W, line); err != nil {
			return err
		}
	}
	return nil
}

// annotation is "file:line: claim ID verdict: says · evidence".
func annotation(c model.Claim) string {
	at := ""
	if c.Source != "" {
		at = c.Source + ": "
	}
	return fmt.Sprintf("%sclaim %s %s: %s · %s", at, c.ID, c.Verdict, oneLine(c.Says), evidence(c))
}

// githubAnnotation is the workflow command for a claim that did not hold.
func githubAnnotation(c model.Claim) string {
	file, line := splitSource(c.Source)
	var props []string
	if file != "" {
		props = append(props, "file="+ghProperty(file))
	}
	if line > 0 {
		props = append(props, fmt.Sprintf("line=%d", line))
	}
	props = append(props, "title="+ghProperty(fmt.Sprintf("claim %s %s", c.ID, c.Verdict)))
	return fmt.Sprintf("::error %s::%s", strings.Join(props, ","), ghData(oneLine(c.Says)+" · "+evidence(c)))
}

// ghData escapes a workflow command's message (%, CR, LF), ghProperty a property value (also
// : and ,), as GitHub Actions' toolkit does.
func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func ghProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

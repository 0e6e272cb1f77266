package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestInCI(t *testing.T) {
	for _, c := range []struct {
		value string
		want  bool
	}{{"true", true}, {"1", true}, {"", false}, {"false", false}, {"yes", false}} {
		t.Setenv("CI", c.value)
		if got := InCI(); got != c.want {
			t.Errorf("CI=%q: InCI() = %v, want %v", c.value, got, c.want)
		}
	}
}

// TestSkipOrFail runs a child test that calls SkipOrFail, once as on a developer's machine and
// once as in CI, and reads its verdict from go test's own output.
func TestSkipOrFail(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "1" {
		SkipOrFail(t, "node is not installed")
		return
	}
	for _, c := range []struct {
		ci, want string
		fails    bool
	}{{"", "--- SKIP", false}, {"true", "--- FAIL", true}} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestSkipOrFail$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTENV_CHILD=1", "CI="+c.ci)
		out, err := cmd.CombinedOutput()
		if (err != nil) != c.fails || !strings.Contains(string(out), c.want) || !strings.Contains(string(out), "node is not installed") {
			t.Errorf("CI=%q: err %v, output:\n%s\nwant %s with the reason", c.ci, err, out, c.want)
		}
	}
}

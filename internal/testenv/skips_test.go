package testenv

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// bareSkip matches the calls that skip a test without saying which of the three reasons of this
// package applies: t.Skip, t.Skipf, t.SkipNow and a test's own look at testing.Short.
var bareSkip = regexp.MustCompile(`\.Skip(f|Now)?\(|testing\.Short\(\)`)

// waiting lists files that still skip bare, each with why it is not converted yet. It only
// shrinks.
var waiting = map[string]string{}

// Every skip in the repository's tests goes through this package, so that in CI a required test
// that cannot run fails instead of passing unseen (the rule of the developers' guide).
func TestNoBareSkips(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found from the test's folder: %v", err)
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if name := d.Name(); rel != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "results" || rel == "internal/testenv") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		checked++
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(src), "\n") {
			if bareSkip.MatchString(line) && waiting[rel] == "" {
				t.Errorf("%s:%d: a bare skip (%s): use testenv.SkipOrFail, testenv.Long or testenv.Figure", rel, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("only %d test files found under %s: the walk is not seeing the repository", checked, root)
	}
	for rel := range waiting {
		if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
			t.Errorf("waiting lists %s, which no longer exists: remove it", rel)
		}
	}
}

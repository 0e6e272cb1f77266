package rundir

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Inside keeps names inside the run folder however the folder is written: absolute, relative,
// or "." (bulkhead report . from inside it), and refuses names that leave it.
func TestInside(t *testing.T) {
	run := t.TempDir()
	if err := os.MkdirAll(filepath.Join(run, "shared", "raw"), 0o755); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(run, "escape")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(run)
	cases := []struct {
		dir, rel string
		want     string // "" = refused as outside
	}{
		{run, "shared", filepath.Join(run, "shared")},
		{".", "shared", "shared"},
		{".", "shared/raw/a.json", filepath.Join("shared", "raw", "a.json")},
		{"./", "shared/raw", filepath.Join("shared", "raw")},
		{"../" + filepath.Base(run), "shared", filepath.Join("..", filepath.Base(run), "shared")},
		{".", "not-yet/file", filepath.Join("not-yet", "file")},
		{".", "../x", ""},
		{".", "/etc", ""},
		{".", "escape/x", ""},
		{run, "escape", ""},
	}
	for _, c := range cases {
		got, err := Inside(c.dir, c.rel)
		switch {
		case c.want == "" && !errors.Is(err, ErrOutside):
			t.Errorf("Inside(%q, %q) = %q, %v; want ErrOutside", c.dir, c.rel, got, err)
		case c.want != "" && (err != nil || got != c.want):
			t.Errorf("Inside(%q, %q) = %q, %v; want %q", c.dir, c.rel, got, err, c.want)
		}
	}
}

package scenarios

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostileFiles returns the files of testdata/hostile: scenario files shaped like the hostile
// inputs of issue 10, each beginning with the "# want: file:line: field.path: reason" lines of
// the problems its error must list.
func hostileFiles(t testing.TB) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "hostile", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no hostile files: %v", err)
	}
	files := map[string][]byte{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(p)] = data
	}
	return files
}

// Every hostile file is refused, quickly and with bounded memory (the fuzz target holds the same
// files as seeds), with the problems its "# want:" lines name.
func TestHostileFiles(t *testing.T) {
	for name, data := range hostileFiles(t) {
		t.Run(name, func(t *testing.T) {
			var wants []string
			for _, line := range strings.Split(string(data), "\n") {
				if w, ok := strings.CutPrefix(line, "# want: "); ok {
					wants = append(wants, w)
				}
			}
			if len(wants) == 0 {
				t.Fatal("the file names no expected problem (# want: ...)")
			}
			s, err := Parse(name, data)
			if err == nil || s != nil {
				t.Fatalf("accepted; want %q", wants)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error does not match ErrInvalid: %v", err)
			}
			for _, w := range wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain\n  %s\ngot:\n  %s", w, strings.ReplaceAll(err.Error(), "\n", "\n  "))
				}
			}
		})
	}
}

// Load reads regular files only, and at most MaxFileSize bytes of them; Parse takes no more.
func TestLoadRefusesWhatIsNotAScenarioFile(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileSize + 1); err != nil { // sparse: no 4 MiB written
		t.Fatal(err)
	}
	f.Close()
	tests := []struct {
		name, path, want string
	}{
		{"a directory", dir, dir + ": not a regular file (a directory); a scenario is a YAML file"},
		{"a file over the cap", big, big + ": 4194305 bytes or more, more than the 4194304 (4 MiB) a scenario file may hold"},
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		tests = append(tests, struct{ name, path, want string }{"a device", "/dev/zero", "/dev/zero: not a regular file (a character device); a scenario is a YAML file"})
	}
	if fifo := makeFIFO(t, dir); fifo != "" {
		tests = append(tests, struct{ name, path, want string }{"a FIFO (no writer: it would block)", fifo, fifo + ": not a regular file (a FIFO); a scenario is a YAML file"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Load(tt.path)
			if s != nil || !errors.Is(err, ErrInvalid) || err.Error() != tt.want {
				t.Errorf("Load = %v, %v; want ErrInvalid %q", s, err, tt.want)
			}
		})
	}
	t.Run("Parse over the cap", func(t *testing.T) {
		_, err := Parse("t.yaml", make([]byte, MaxFileSize+1))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "more than the 4194304 (4 MiB)") {
			t.Errorf("Parse = %v, want the size cap", err)
		}
	})
	t.Run("Open through the same path", func(t *testing.T) {
		if _, err := Open(big); !errors.Is(err, ErrInvalid) {
			t.Errorf("Open(big) = %v, want the size cap", err)
		}
	})
}

package scenarios

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
)

// builtin holds the scenario files shipped with the binary, so `bulkhead run hypothesis` works
// from any directory.
//
//go:embed *.yaml
var builtin embed.FS

// BuiltinPrefix starts the Path of a scenario loaded from the embedded files.
const BuiltinPrefix = "builtin:"

// Names returns the names of the built-in scenarios (file names without .yaml), sorted.
func Names() []string {
	entries, _ := fs.ReadDir(builtin, ".") // cannot fail on an embed.FS root
	var names []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok && !e.IsDir() {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// Source returns the bytes of the built-in scenario name (with or without ".yaml" or the
// "builtin:" prefix), or an error matching ErrNotFound.
func Source(name string) ([]byte, error) {
	n := strings.TrimSuffix(strings.TrimPrefix(name, BuiltinPrefix), ".yaml")
	if n == "" || strings.ContainsAny(n, `/\`) || !slices.Contains(Names(), n) {
		return nil, fmt.Errorf("built-in scenario %q: %w (built-ins: %s)", name, ErrNotFound, strings.Join(Names(), ", "))
	}
	return builtin.ReadFile(path.Clean(n + ".yaml"))
}

// Open loads a scenario by file path or by built-in name. An existing file wins: `Open("x.yaml")`
// reads ./x.yaml if there is one. Otherwise a built-in of that name ("hypothesis", also
// "hypothesis.yaml" or "builtin:hypothesis") is loaded, with Path "builtin:<name>". It blocks on
// reading the file only. When neither exists it returns an error matching ErrNotFound that lists
// the built-in names; a file or built-in that does not validate gives Load's error (ErrInvalid).
func Open(nameOrPath string) (*Scenario, error) {
	if !strings.HasPrefix(nameOrPath, BuiltinPrefix) {
		info, err := os.Stat(nameOrPath)
		switch {
		case err == nil && !info.IsDir():
			return Load(nameOrPath)
		case err == nil:
			return nil, fmt.Errorf("open scenario %q: is a directory", nameOrPath)
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("open scenario: %w", err)
		}
	}
	data, err := Source(nameOrPath)
	if err != nil {
		return nil, fmt.Errorf("open scenario %q: no such file and no built-in scenario of that name: %w (built-ins: %s)",
			nameOrPath, ErrNotFound, strings.Join(Names(), ", "))
	}
	name := strings.TrimSuffix(strings.TrimPrefix(nameOrPath, BuiltinPrefix), ".yaml")
	return Parse(BuiltinPrefix+name, data)
}

package target_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkheadlab/bulkhead/target"
)

// A target's version command runs in the target's folder (a command's dir, relative to the
// scenario's) and its trimmed output is the version; a failing command is an error quoting its
// stderr; no command is no version.
func TestRunVersion(t *testing.T) {
	scen := t.TempDir()
	if err := os.MkdirAll(filepath.Join(scen, "svc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(scen, "svc", "VERSION"), []byte("  svc 1.4.2\nbuilt today\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := func(version ...string) target.Spec {
		return target.Spec{Name: "shared", Dir: scen, Config: &target.Config{Kind: "command", Version: version,
			Params: &target.CommandParams{Command: []string{"true"}, Dir: "svc"}}}
	}
	tests := []struct {
		name    string
		spec    target.Spec
		want    string
		wantErr string
	}{
		{"read in the command's dir", cmd("cat", "VERSION"), "svc 1.4.2\nbuilt today", ""},
		{"a url target's runs in the scenario's folder", target.Spec{Name: "u", Dir: filepath.Join(scen, "svc"),
			Config: &target.Config{Kind: "url", URL: "http://127.0.0.1:1", Version: []string{"cat", "VERSION"}}}, "svc 1.4.2\nbuilt today", ""},
		{"no version command", cmd(), "", ""},
		{"a failing command", cmd("sh", "-c", "echo no such build >&2; exit 3"), "", "no such build"},
		{"a missing program", cmd("no-such-program-for-version"), "", "no-such-program-for-version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := target.RunVersion(context.Background(), tt.spec)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "configuration "+tt.spec.Name) {
					t.Fatalf("err = %v, want one naming the configuration and quoting %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("= %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

package rundir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CopyInputs copies a target's files and folders under TargetFilesDir/<configuration>, keeping
// paths and executable bits; RecordInputs then records them; a symlink inside a folder, a path
// leading out and a second copy for the same configuration are refused.
func TestCopyInputs(t *testing.T) {
	src, run := t.TempDir(), t.TempDir()
	write := func(rel, body string, mode os.FileMode) {
		t.Helper()
		p := filepath.Join(src, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("serve.sh", "exec x\n", 0o755)
	write("conf/a.cfg", "a\n", 0o644)
	write("conf/deep/b.cfg", "b\nb\n", 0o644)
	dst, err := CopyInputs(run, "shared", src, []string{"serve.sh", "conf"})
	if err != nil {
		t.Fatal(err)
	}
	if dst != filepath.Join(run, TargetFilesDir, "shared") {
		t.Errorf("dst = %s", dst)
	}
	if fi, err := os.Stat(filepath.Join(dst, "serve.sh")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("serve.sh: %v, mode %v; want it copied and executable", err, fi)
	}
	recs, err := RecordInputs(run)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.Path)
	}
	want := "target-files/shared/conf/a.cfg target-files/shared/conf/deep/b.cfg target-files/shared/serve.sh"
	if strings.Join(got, " ") != want {
		t.Errorf("recorded %v, want %s", got, want)
	}
	if _, err := CopyInputs(run, "shared", src, []string{"serve.sh"}); err == nil {
		t.Error("a second copy for the same configuration was accepted")
	}
	if _, err := CopyInputs(run, "other", src, []string{"../x"}); !errors.Is(err, ErrOutside) {
		t.Errorf("../x: err = %v, want ErrOutside", err)
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(src, "conf", "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := CopyInputs(run, "third", src, []string{"conf"}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a symlink inside a folder: err = %v", err)
	}
}

package rundir

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// CopyInputs copies the files and folders rels (local paths relative to src) into
// dir/TargetFilesDir/name/, keeping their relative paths, and returns that folder. A folder is
// copied with everything under it; only regular files and folders are copied (a symlink is
// followed at the top, refused below: it could lead anywhere). The copies are what
// RecordInputs records and what the scenario as run starts the target from. It fails, naming
// the file, when a path is not local, cannot be read, or the destination exists already.
func CopyInputs(dir, name, src string, rels []string) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	dst := filepath.Join(dir, TargetFilesDir, name)
	if _, err := os.Lstat(dst); err == nil {
		return "", fmt.Errorf("copy inputs: %s exists already", dst)
	}
	for _, rel := range rels {
		if !filepath.IsLocal(rel) {
			return "", fmt.Errorf("copy inputs: %q: %w", rel, ErrOutside)
		}
		from, to := filepath.Join(src, rel), filepath.Join(dst, rel)
		fi, err := os.Stat(from)
		if err != nil {
			return "", fmt.Errorf("copy inputs: %w", err)
		}
		if !fi.IsDir() {
			if err := copyFile(from, to, fi.Mode()); err != nil {
				return "", err
			}
			continue
		}
		err = filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			r, _ := filepath.Rel(from, p)
			switch t := d.Type(); {
			case d.IsDir():
				return os.MkdirAll(filepath.Join(to, r), 0o755)
			case t.IsRegular():
				info, err := d.Info()
				if err != nil {
					return err
				}
				return copyFile(p, filepath.Join(to, r), info.Mode())
			default:
				return fmt.Errorf("%s: not a regular file (%s); list what it points to instead", p, t)
			}
		})
		if err != nil {
			return "", fmt.Errorf("copy inputs: %w", err)
		}
	}
	return dst, nil
}

// copyFile copies from to to (which must not exist), keeping the executable bits of mode.
func copyFile(from, to string, mode fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return fmt.Errorf("copy inputs: %w", err)
	}
	in, err := os.Open(from)
	if err != nil {
		return fmt.Errorf("copy inputs: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644|mode.Perm()&0o111)
	if err != nil {
		return fmt.Errorf("copy inputs: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy inputs: %s: %w", from, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("copy inputs: %w", err)
	}
	return nil
}

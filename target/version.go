package target

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/bulkheadlab/bulkhead/supervise"
)

// DefaultVersionTimeout bounds a target's version command.
const DefaultVersionTimeout = 10 * time.Second

// maxVersion is how much of a version command's output is kept: a version is a line or a few,
// not a log.
const maxVersion = 1024

// RunVersion runs the version command of spec's target (Config.Version), under the process
// supervisor, in the target's folder: a kind's files folder (Files) relative to spec.Dir, else
// spec.Dir. It returns the command's standard output with surrounding space trimmed (at most
// maxVersion bytes), or "" when the target has no version command. It blocks until the command
// exits, DefaultVersionTimeout passes or ctx ends; a command that fails, or cannot start, is an
// error naming the configuration and quoting the end of its stderr.
func RunVersion(ctx context.Context, spec Spec) (string, error) {
	c := spec.Config
	if c == nil || len(c.Version) == 0 {
		return "", nil
	}
	dir := spec.Dir
	if k, err := Of(c); err == nil {
		if f, ok := k.(Files); ok {
			d, _ := f.Files(c)
			dir = commandDir(spec.Dir, d)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultVersionTimeout)
	defer cancel()
	out := &capped{max: maxVersion}
	p, err := supervise.Start(ctx, supervise.Spec{Name: "configuration " + spec.Name + ": target version", Argv: c.Version, Dir: dir, StdoutTo: out})
	if err != nil {
		return "", err
	}
	err = p.Wait(ctx)
	p.Stop() // closes its files; after an exit it only reports it
	if errors.Is(err, context.DeadlineExceeded) {
		return "", fmt.Errorf("configuration %s: target version %q: no answer within %s", spec.Name, strings.Join(c.Version, " "), DefaultVersionTimeout)
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out.String()), nil
}

// capped keeps the first max bytes written to it.
type capped struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (c *capped) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(b[:min(len(b), room)])
	}
	return len(b), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

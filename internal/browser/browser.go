// Package browser gives tests a real headless browser: Debian's chromium, driven over the
// DevTools protocol (chromedp). scripts/chromium.sh installs it with apt-get when it is missing;
// when it cannot be had the test is skipped on a developer's machine and failed in CI
// (internal/testenv).
package browser

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bulkheadlab/bulkhead/internal/testenv"
)

// Path returns the browser's path, running scripts/chromium.sh to install it when it is missing
// (a few minutes the first time).
func Path(t testing.TB) string {
	t.Helper()
	script := filepath.Join(repoRoot(t), "scripts", "chromium.sh")
	if out, err := exec.Command(script, "--check").Output(); err == nil {
		return lastLine(out)
	}
	t.Logf("installing chromium with %s", script)
	cmd := exec.Command(script)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		testenv.SkipOrFail(t, "no headless browser: %s: %v", script, err)
	}
	return lastLine(out)
}

// Flags are the flags the browser runs headless with here: no sandbox (tests run as root), no
// GPU, and none of the background traffic it would start to hosts this machine cannot reach.
var Flags = []chromedp.ExecAllocatorOption{
	chromedp.Flag("headless", true),
	chromedp.NoSandbox,
	chromedp.DisableGPU,
	chromedp.NoFirstRun,
	chromedp.NoDefaultBrowserCheck,
	chromedp.Flag("disable-quic", true),
	chromedp.Flag("disable-background-networking", true),
	chromedp.Flag("disable-component-update", true),
	chromedp.Flag("disable-sync", true),
}

// Context starts a headless browser for the test, in a new empty profile, and returns a context
// that runs chromedp actions in one tab of it. The browser is stopped when the test ends; every
// action fails once timeout has passed.
func Context(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	opts := append([]chromedp.ExecAllocatorOption{chromedp.ExecPath(Path(t)), chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1000)}, Flags...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		cancelAlloc()
	})
	return ctx
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

func repoRoot(t testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("browser: cannot find its own source file")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

package supervise_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/bulkheadlab/bulkhead/internal/testenv"
	"github.com/bulkheadlab/bulkhead/supervise"
)

// Alive is true for a running process and false for one that exited, whether its parent has
// reaped it yet (a zombie) or not, and for ids that cannot be processes.
func TestAlive(t *testing.T) {
	if !supervise.Alive(os.Getpid()) {
		t.Error("this process is not alive")
	}
	for _, pid := range []int{0, -1} {
		if supervise.Alive(pid) {
			t.Errorf("Alive(%d) = true", pid)
		}
	}
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		testenv.SkipOrFail(t, "cannot start true: %v", err)
	}
	pid := cmd.Process.Pid
	// Exited but not yet waited for: a zombie, once it has run.
	for range 1000 {
		if !supervise.Alive(pid) {
			break
		}
		exec.Command("true").Run() // let it run and exit
	}
	if supervise.Alive(pid) {
		t.Errorf("pid %d of an exited, unreaped child is alive", pid)
	}
	cmd.Wait()
	if supervise.Alive(pid) { // reaped; reuse of its pid this soon is unlikely
		t.Errorf("pid %d of a reaped child is alive", pid)
	}
}

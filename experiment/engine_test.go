package experiment

import (
	"strings"
	"testing"
)

func TestOpenEngine(t *testing.T) {
	for _, name := range []string{"", LocalEngine} {
		e, err := OpenEngine(name, EngineSettings{})
		if err != nil || e.Name() != LocalEngine {
			t.Fatalf("OpenEngine(%q) = %v, %v; want the local engine", name, e, err)
		}
	}
	_, err := OpenEngine("nomad", EngineSettings{})
	if err == nil || !strings.Contains(err.Error(), `engine "nomad"`) || !strings.Contains(err.Error(), LocalEngine) {
		t.Fatalf("OpenEngine(nomad): %v; want an error naming it and the known engines", err)
	}
}

// Every engine's parts behind the seam: a run whose engine is Local records it, and the local
// engine keeps the load where Options.Load puts it.
func TestLocalEngineKeepsTheLoadLayout(t *testing.T) {
	if !(Local{}).LoadInRunner(Options{}) || !(Local{}).LoadInRunner(Options{Load: LoadInProcess}) || (Local{}).LoadInRunner(Options{Load: LoadProcess}) {
		t.Fatal("the local engine runs the load in the runner exactly in the in-process layout")
	}
}

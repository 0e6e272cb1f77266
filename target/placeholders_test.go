package target

import (
	"slices"
	"strings"
	"testing"
)

// Expand fills {port}, {port:NAME} and {dep.NAME} and refuses anything else.
func TestExpand(t *testing.T) {
	deps := map[string]string{"A": "127.0.0.1:21001"}
	ports := map[string]string{"": "8080", "stats": "9090"}
	got, err := Expand("--port={port} --stats={port:stats} --a=http://{dep.A}", ports, deps)
	if err != nil || got != "--port=8080 --stats=9090 --a=http://127.0.0.1:21001" {
		t.Errorf("Expand = %q, %v", got, err)
	}
	for _, bad := range []string{"{dep.B}", "{host}", "{}", "{port:admin}", "{port:}"} {
		if _, err := Expand(bad, ports, deps); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("Expand(%q) err = %v, want one naming it", bad, err)
		}
	}
	if _, err := Expand("{port}", nil, deps); err == nil {
		t.Error("{port} filled without ports (a URL target has none)")
	}
}

func TestPortNames(t *testing.T) {
	got := PortNames("x {port:stats}", "{port} {dep.A} {port:stats}", "{port:admin}")
	if want := []string{"stats", "", "admin"}; !slices.Equal(got, want) {
		t.Errorf("PortNames = %q, want %q", got, want)
	}
}

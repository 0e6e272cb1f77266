package proxy_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"

	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/faults/proxy"
)

func Example() {
	ctx := context.Background()
	dep := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "ok")
	}))
	defer dep.Close()

	inj := proxy.NewEmbedded()
	defer inj.Close(ctx)
	listen, err := inj.AddProxy(ctx, "A", strings.TrimPrefix(dep.URL, "http://"))
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: &http.Transport{}}
	call := func() string {
		resp, err := client.Get("http://" + listen + "/")
		switch {
		case errors.Is(err, syscall.ECONNREFUSED):
			return "refused"
		case errors.Is(err, syscall.ECONNRESET):
			return "reset"
		case err != nil:
			return err.Error()
		}
		resp.Body.Close()
		return resp.Status
	}

	fmt.Println("healthy:", call())
	_ = inj.Apply(ctx, "A", faults.New("A", &faults.Down{}).Effect())
	fmt.Println("down:", call())
	_ = inj.Clear(ctx, "A") // effects add up: clear the down first
	_ = inj.Apply(ctx, "A", faults.New("A", &faults.Reset{}).Effect())
	fmt.Println("reset:", call())
	_ = inj.Clear(ctx, "A")
	fmt.Println("cleared:", call())
	// Output:
	// healthy: 200 OK
	// down: refused
	// reset: reset
	// cleared: 200 OK
}

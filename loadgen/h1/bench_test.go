package h1

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkExchange is one GET of an empty 200 through h1 and through net/http, on a pooled
// connection and on a new one each time (keep-alive off): what a request costs the load
// generator, and what a dial adds.
func BenchmarkExchange(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	for _, bc := range []struct {
		name string
		c    *http.Client
	}{
		{"h1/pooled", client(New(Options{Timeout: 5 * time.Second}))},
		{"h1/dial", client(New(Options{Timeout: 5 * time.Second, DisableKeepAlives: true}))},
		{"nethttp/pooled", &http.Client{Transport: &http.Transport{}, Timeout: 5 * time.Second}},
		{"nethttp/dial", &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				resp, err := bc.c.Get(srv.URL)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}

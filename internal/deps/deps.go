// Package deps pins the project's third-party modules while packages are being written.
package deps

import (
	_ "github.com/HdrHistogram/hdrhistogram-go"
	_ "github.com/Shopify/toxiproxy/v2"
	_ "github.com/Shopify/toxiproxy/v2/client"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/rs/zerolog"
	_ "github.com/sony/gobreaker/v2"
	_ "github.com/spf13/cobra"
	_ "github.com/tsenart/vegeta/v12/lib"
	_ "golang.org/x/net/netutil"
	_ "golang.org/x/sync/semaphore"
	_ "gonum.org/v1/plot"
	_ "gopkg.in/yaml.v3"
)

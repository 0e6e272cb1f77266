# The two commands of the README: `make run` reproduces seed 004 end to end on the embedded
# Toxiproxy; `make test` runs every test. Nothing else needs to be installed besides Go.
GO      ?= go
BIN     := bin/bulkhead
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
SCENARIO ?= hypothesis

.PHONY: run test build vet bench clean

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/bulkhead

run: build
	./$(BIN) run $(SCENARIO)

# End-to-end packages run real load and judge runs by their send lag; the race detector slows the
# load generator several-fold and would make every such run invalid, so they run without it. Every
# package they drive is also tested under -race by its own unit tests.
E2E := ./e2e ./verdicts

test:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(GO) test -race -count=1 $$($(GO) list ./... | grep -v -e /e2e$$ -e /verdicts$$)
	$(GO) test -count=1 -timeout 30m $(E2E)

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin

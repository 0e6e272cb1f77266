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

test:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin

# The two commands of the README: `make run` reproduces seed 004 end to end on the embedded
# Toxiproxy; `make test` runs every test. Nothing else needs to be installed besides Go.
GO      ?= go
BIN     := bin/bulkhead
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
SCENARIO ?= hypothesis

.PHONY: run test test-short test-e2e build vet bench clean

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/bulkhead

run: build
	./$(BIN) run $(SCENARIO)

# Two tiers (.ci/test says what each runs): tier 1 is gofmt, vet and the unit tests under the race
# detector with -short; tier 2 runs every test without the race detector, the end-to-end ones
# too (those that judge real runs one package at a time). Per-package times and each tier's wall
# time are printed at the end. Tests that run a real time line call testenv.Long: never under -race.
test:
	@GO=$(GO) .ci/test

test-short:
	@GO=$(GO) .ci/test 1

test-e2e:
	@GO=$(GO) .ci/test 2

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin

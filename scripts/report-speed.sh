#!/bin/sh
# report-speed.sh: time `bulkhead report` against `vegeta report` over the same raw files, at
# 100,000 and 1,000,000 requests (report/bench_test.go's benchmark world: two configurations,
# two endpoints, 40 s at 625/s and 6250/s per endpoint), PAIRS pairs each (default 3), the two
# commands alternating so that both see the same page cache and machine. Run it under the
# project's load lock: the figures mean nothing on a busy machine.
#
#   scripts/report-speed.sh [PAIRS]
#
# vegeta is built from the Go module proxy (v12.13.0) into a temporary GOBIN; the worlds and the
# binaries live in a temporary folder removed at the end. Prints one line per command and size,
# then the ratio of the medians.
set -eu
pairs=${1:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$root"
go build -o "$tmp/bulkhead" ./cmd/bulkhead
GOBIN="$tmp" GOFLAGS=-mod=mod go install github.com/tsenart/vegeta/v12@v12.13.0 2>/dev/null
secs() { # secs CMD...: the command's wall time in seconds
	s=$(date +%s.%N)
	"$@" >/dev/null 2>&1 || true
	e=$(date +%s.%N)
	echo "$e - $s" | bc
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for size in 100k:625 1M:6250; do
	name=${size%%:*}
	rate=${size##*:}
	world="$tmp/world-$name"
	BULKHEAD_BENCH_WORLD="$world" BULKHEAD_BENCH_RATE="$rate" go test -count=1 -run '^TestWriteBenchWorld$' ./report >/dev/null
	: >"$tmp/b" ; : >"$tmp/v"
	for i in $(seq "$pairs"); do
		secs "$tmp/bulkhead" report "$world" >>"$tmp/b"
		secs "$tmp/vegeta" report "$world"/*/raw/*.json >>"$tmp/v"
	done
	echo "$name bulkhead report: $(tr '\n' ' ' <"$tmp/b")s"
	echo "$name vegeta report:   $(tr '\n' ' ' <"$tmp/v")s"
	b=$(median <"$tmp/b"); v=$(median <"$tmp/v")
	echo "$name median ratio bulkhead/vegeta: $(echo "scale=2; $b / $v" | bc)"
	rm -rf "$world"
done

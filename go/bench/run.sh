#!/usr/bin/env bash
# make bench-go: runs every side of the Go bench interleaved in rounds (cmd/report) and writes
# the medians to bench/results/go.md and the native sidecar bench/results/go.json. ROUNDS,
# BENCHTIME and CLOCK (wall or cpu) override the defaults; QUICK=1 (make) passes ROUNDS=3
# BENCHTIME=20ms, and MPK_BENCH_QUICK=1 alone does the same.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$root/bench/results/go.md"
side="$root/bench/results/go.json"
mkdir -p "$root/bench/results"
cd "$here"
quick=0
if [ "${MPK_BENCH_QUICK:-}" = 1 ]; then
  quick=1
  : "${ROUNDS:=3}" "${BENCHTIME:=20ms}"
fi
go mod download

# The protobuf messages: Go code from the common schemas (bench/workloads/workloads.proto and
# seed.proto), made now with Debian's protoc and protoc-gen-go built from the module this bench
# requires (so the generated code and its runtime are the same version), into ./wpb (ignored by
# git). Both .proto files go to one Go package.
gobin="$root/build/go-bench-bin"
mkdir -p "$gobin" wpb
go build -o "$gobin/protoc-gen-go" google.golang.org/protobuf/cmd/protoc-gen-go
protoc --plugin=protoc-gen-go="$gobin/protoc-gen-go" -I "$root/bench/workloads" \
  --go_out=wpb --go_opt=paths=source_relative \
  --go_opt=Mworkloads.proto=mpk.dev/go/bench/wpb --go_opt=Mseed.proto=mpk.dev/go/bench/wpb \
  workloads.proto seed.proto

tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT
go run ./cmd/report -rounds "${ROUNDS:-15}" -benchtime "${BENCHTIME:-30ms}" -clock "${CLOCK:-wall}" \
  -sidecar "$side" -quick="$([ $quick = 1 ] && echo true || echo false)" > "$tmp"
{
  echo "## Go (mpk.dev/go/mpk)"
  echo
  if [ $quick = 1 ]; then echo "**Quick run (QUICK=1): few rounds, short timings; not for quoting.**"; echo; fi
  echo "Run on $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), load average at start $(cut -d' ' -f1-3 /proc/loadavg), $(go version | cut -d' ' -f3)."
  echo "Made by \`make bench-go\` (go/bench/run.sh → go/bench/cmd/report); the same sides run as"
  echo "\`go test -bench . -benchmem\` in go/bench. Sidecar: bench/results/go.json."
  echo
  echo "Libraries: $(go list -m -f '{{.Path}} {{.Version}}' github.com/vmihailenco/msgpack/v5 github.com/tinylib/msgp github.com/shamaton/msgpack/v2 google.golang.org/protobuf | paste -sd, | sed 's/,/, /g'), encoding/json of $(go version | cut -d' ' -f3)."
  echo "Sides: mpk = mpk.Marshal/Unmarshal (by reflection for structs: IgnoreGenerated); mpk-auto = mpk.Marshal/Unmarshal"
  echo "of a type with generated methods, which they use; mpkgen = methods written by mpkgen;"
  echo "msgp = methods written by tinylib/msgp for structs, its runtime (msgp.AppendIntf / msgp.ReadIntfBytes)"
  echo "for \`any\` trees; vmihailenco and shamaton = their Marshal/Unmarshal;"
  echo "protobuf = proto.Marshal/Unmarshal of messages protoc-gen-go made at bench time from bench/workloads/*.proto"
  echo "(decoding the workload's .pb, protoc's own encoding); json = encoding/json. Marshal"
  echo "returns a new slice every time (MarshalMsg(nil) for generated code); Unmarshal decodes into a"
  echo "fresh value. Every side is checked to give back its value before it is timed, and probed for"
  echo "aliasing: a side whose decoded []byte/string changed when its input was overwritten is marked zero-copy."
  echo
  cat "$tmp"
} > "$out"
echo "bench-go: wrote $out and $side"

#!/usr/bin/env bash
# make bench-go: runs every side of the Go bench interleaved in rounds (cmd/report) and writes
# the medians to bench/results/go.md. ROUNDS, BENCHTIME and CLOCK (wall or cpu) override the defaults.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$root/bench/results/go.md"
mkdir -p "$root/bench/results"
cd "$here"
go mod download
tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT
go run ./cmd/report -rounds "${ROUNDS:-21}" -benchtime "${BENCHTIME:-100ms}" -clock "${CLOCK:-wall}" > "$tmp"
{
  echo "## Go (mpk.dev/go/mpk)"
  echo
  echo "Run on $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), load average at start $(cut -d' ' -f1-3 /proc/loadavg), $(go version | cut -d' ' -f3)."
  echo "Made by \`make bench-go\` (go/bench/run.sh → go/bench/cmd/report); the same sides run as"
  echo "\`go test -bench . -benchmem\` in go/bench."
  echo
  echo "Libraries: $(go list -m -f '{{.Path}} {{.Version}}' github.com/vmihailenco/msgpack/v5 github.com/tinylib/msgp github.com/shamaton/msgpack/v2 google.golang.org/protobuf | paste -sd, | sed 's/,/, /g'), encoding/json of $(go version | cut -d' ' -f3)."
  echo "Sides: mpk = mpk.Marshal/Unmarshal by reflection (IgnoreGenerated); mpk-auto = mpk.Marshal/Unmarshal"
  echo "of a type with generated methods, which they use; mpkgen = methods written by mpkgen;"
  echo "msgp = methods written by tinylib/msgp; vmihailenco and shamaton = their Marshal/Unmarshal;"
  echo "protobuf = proto.Marshal/Unmarshal of protoc-gen-go messages; json = encoding/json. Marshal"
  echo "returns a new slice every time (MarshalMsg(nil) for generated code); Unmarshal decodes into a"
  echo "fresh value. Every side is checked to give back its value before it is timed."
  echo
  cat "$tmp"
} > "$out"
echo "bench-go: wrote $out"

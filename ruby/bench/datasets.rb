# The benchmark's datasets, shared by bench.rb (times) and icount.rb (callgrind instruction counts).
#
# They are the project's common workloads (bench/workloads/gen.py, written by `make bench-workloads`
# into build/bench-workloads/), so that every language measures the same bytes: every workload of
# the manifest, in its order — the typed ones (a protobuf message each: the C++ seed's Test1-Test4,
# the Go seed's Product and 100 Products, the JS seed's 16-row table, the Ruby seed's image record,
# integers, GeoJSON and 3D model, the C seed's integer and string arrays, a long string, non-ASCII
# strings, 64 KiB bins) and the schemaless ones (the Ruby seed's Twitter response, the
# nativejson-benchmark files twitter, citm_catalog and canada, the JS seed's sample documents).
# Nothing is generated here.
#
# Each workload gives:
#   value  the Ruby value of <id>.msgpack (decoded by msgpack-ruby, the peer, not by mpk)
#   json   the Ruby value of <id>.json (bin values are base64 strings there: JSON has no binary)
#   proto  the protobuf message's full name (seed.Test1, mpkbench.Image, ...) or nil, and pb the
#          bytes of <id>.pb (protoc's own encoding)
require "json"

BENCH_WORKLOADS_DIR = (ENV["MPK_BENCH_WORKLOADS"] || File.expand_path("../../build/bench-workloads", __dir__)).freeze
# icount.rb's workloads (callgrind is slow: the Ruby seed's sets, the nativejson files and Test1-Test4).
ICOUNT_WORKLOAD_IDS = %w[rb_twitter rb_image rb_integers rb_geojson rb_model3d twitter citm_catalog canada
                         test1 test2 test3 test4].freeze

BenchWorkload = Struct.new(:id, :title, :seed, :value, :msgpack, :json, :json_text, :proto, :pb, keyword_init: true)

# The manifest's workloads (those of `ids` only, in that order, when given), loaded one at a time
# as the returned Enumerator is walked, so that a bench holds one workload's values at once (a
# smaller heap: GC.start between samples stays cheap); aborts with the command to run when the
# manifest is missing.
def bench_workloads(only: nil, ids: nil)
  require "msgpack"
  manifest = File.join(BENCH_WORKLOADS_DIR, "manifest.json")
  abort "bench: #{manifest} is missing; run `make bench-workloads` first" unless File.exist?(manifest)
  entries = JSON.parse(File.read(manifest))["workloads"]
  entries = ids.filter_map { |id| entries.find { |w| w["id"] == id } } if ids
  entries = entries.select { |w| w["id"].include?(only) || w["title"].include?(only) } if only
  Enumerator.new do |y|
    entries.each do |w|
      file = ->(kind) { (f = w["files"][kind]) && File.join(BENCH_WORKLOADS_DIR, f) }
      packed = File.binread(file.("msgpack"))
      json_text = file.("json") && File.exist?(file.("json")) ? File.read(file.("json"), encoding: "UTF-8") : nil
      pb = file.("pb") && File.exist?(file.("pb")) ? File.binread(file.("pb")) : nil
      y << BenchWorkload.new(id: w["id"], title: w["title"], seed: w["seed"], value: MessagePack.unpack(packed),
                             msgpack: packed, json: json_text && JSON.parse(json_text), json_text: json_text,
                             proto: pb && w["proto"], pb: pb)
    end
  end
end

# [[label, value]] for icount.rb: the MessagePack values of `ids` (ICOUNT_WORKLOAD_IDS by default).
def datasets(ids = ICOUNT_WORKLOAD_IDS)
  bench_workloads(ids: ids).map { |w| ["#{w.id}: #{w.title}", w.value, w.seed] }
end

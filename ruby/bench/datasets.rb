# The benchmark's datasets, shared by bench.rb (times) and icount.rb (callgrind instruction counts).
#
# They are the project's common workloads (bench/workloads/gen.py, written by `make bench-workloads`
# into build/bench-workloads/), so that every language measures the same bytes: the Ruby seed's sets
# (rb_*: the ruby-serializers Twitter response, image record, integer array, GeoJSON and 3D model),
# the nativejson-benchmark files (twitter, citm_catalog, canada) and the C++ seed's Test1-Test4 of
# the Protocol Buffers comparison. Nothing is generated here.
#
# Each workload gives:
#   value  the Ruby value of <id>.msgpack (decoded by msgpack-ruby, the peer, not by mpk)
#   json   the Ruby value of <id>.json (bin values are base64 strings there: JSON has no binary)
#   proto  the protobuf message's full name (seed.Test1, mpkbench.Image, ...) or nil, and pb the
#          bytes of <id>.pb (protoc's own encoding)
require "json"

BENCH_WORKLOADS_DIR = (ENV["MPK_BENCH_WORKLOADS"] || File.expand_path("../../build/bench-workloads", __dir__)).freeze
BENCH_WORKLOAD_IDS = %w[rb_twitter rb_image rb_integers rb_geojson rb_model3d twitter citm_catalog canada
                        test1 test2 test3 test4].freeze

BenchWorkload = Struct.new(:id, :title, :seed, :value, :msgpack, :json, :json_text, :proto, :pb, keyword_init: true)

# The workloads of BENCH_WORKLOAD_IDS found in the manifest (all of them once `make bench-workloads`
# ran), in that order; aborts with the command to run when the manifest is missing.
def bench_workloads(only: nil)
  require "msgpack"
  manifest = File.join(BENCH_WORKLOADS_DIR, "manifest.json")
  abort "bench: #{manifest} is missing; run `make bench-workloads` first" unless File.exist?(manifest)
  by_id = JSON.parse(File.read(manifest))["workloads"].to_h { |w| [w["id"], w] }
  BENCH_WORKLOAD_IDS.filter_map do |id|
    w = by_id[id] or next
    next if only && !id.include?(only) && !w["title"].include?(only)
    file = ->(kind) { (f = w["files"][kind]) && File.join(BENCH_WORKLOADS_DIR, f) }
    packed = File.binread(file.("msgpack"))
    json_text = file.("json") && File.exist?(file.("json")) ? File.read(file.("json"), encoding: "UTF-8") : nil
    pb = file.("pb") && File.exist?(file.("pb")) ? File.binread(file.("pb")) : nil
    BenchWorkload.new(id: id, title: w["title"], seed: w["seed"], value: MessagePack.unpack(packed), msgpack: packed,
                      json: json_text && JSON.parse(json_text), json_text: json_text, proto: pb && w["proto"], pb: pb)
  end
end

# [[label, value]] for icount.rb: the workloads' MessagePack values.
def datasets
  bench_workloads.map { |w| ["#{w.id}: #{w.title}", w.value, w.seed] }
end

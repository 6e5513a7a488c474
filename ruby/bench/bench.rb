# mpk against msgpack-ruby (Debian's 1.4.2), Oj and json (C extensions) and google-protobuf, in one
# process, on every workload of the project's manifest (bench/datasets.rb, from `make bench-workloads`):
# google-protobuf on the typed ones (those with a protobuf message), the others without it.
#
#   ruby -I lib -I build/lib bench/bench.rb [--rounds N] [--min-time S] [--quick] [--only ID]
#        [--pb-dir DIR] [--out FILE.md] [--json FILE.json]
#
# The MessagePack libraries pack and unpack the workload's value (<id>.msgpack); the JSON libraries
# the same workload's JSON form (<id>.json: bin values are base64 strings there); google-protobuf
# encodes and decodes the workload's message (decoded from <id>.pb, protoc's encoding) with the
# classes `protoc --ruby_out` made from bench/workloads/*.proto into --pb-dir (mk/ruby.mk does it at
# bench time); without them the protobuf column stays empty. `skip` walks a value without building it.
#
# Each round times every (library, operation) of a workload once, in an order that rotates between
# rounds so that machine noise hits all alike. A sample starts from a collected heap (GC.start, not
# timed) and repeats the call a fixed number of times; the time per call includes the garbage
# collections those calls cause. The count is mpk's (enough calls for --min-time seconds, 30 ms by
# default), and every peer within COMMON_COUNT_SPAN (4x) of mpk's time makes the SAME number of
# calls: the same work from the same heap state, so the same collections fall into every library's
# sample (see common_counts). A peer slower than that makes its own count (min-time's worth).
# The tables give the median time per call and the ratio peer / mpk (2.00: mpk takes half the
# time). A library whose result does not round-trip is left out of that row ("-").
# --quick (or MPK_BENCH_QUICK=1): at most 2 rounds of 10 ms samples. --cpu-time: time with the
# process's CPU clock instead of the wall clock (for a loaded machine). Not a test: nothing asserts.
require "json"
require "oj"
require "msgpack"
require "mpk"
require "optparse"
require "etc"

opts = { rounds: 9, min_time: 0.03, only: nil, out: nil, json: nil, quick: ENV["MPK_BENCH_QUICK"] == "1", pb_dir: nil,
         cpu_time: false }
OptionParser.new do |o|
  o.on("--rounds N", Integer) { |v| opts[:rounds] = v }
  o.on("--min-time S", Float) { |v| opts[:min_time] = v }
  o.on("--quick") { opts[:quick] = true }
  o.on("--cpu-time") { opts[:cpu_time] = true }
  o.on("--only ID") { |v| opts[:only] = v }
  o.on("--pb-dir DIR") { |v| opts[:pb_dir] = v }
  o.on("--out FILE") { |v| opts[:out] = v }
  o.on("--json FILE") { |v| opts[:json] = v }
end.parse!
if opts[:quick]
  opts[:rounds] = [opts[:rounds], 2].min
  opts[:min_time] = [opts[:min_time], 0.01].min
end

require_relative "datasets"

# google-protobuf and the generated classes, when present.
PB_NOTE = begin
  raise LoadError, "no --pb-dir" unless opts[:pb_dir]
  $LOAD_PATH.unshift(opts[:pb_dir])
  require "google/protobuf"
  require "seed_pb"
  require "workloads_pb"
  nil
rescue LoadError => e
  "google-protobuf not measured (#{e.message})"
end

def pb_class(name)
  Google::Protobuf::DescriptorPool.generated_pool.lookup(name)&.msgclass
end

# [label in the tables, sidecar library, kind, which form of the workload, pack, unpack]
LIBS = [
  ["mpk", "mpk", "mpk", :value, ->(v) { MPK.pack(v) }, ->(s) { MPK.unpack(s) }],
  ["msgpack-ruby", "msgpack-ruby", "msgpack", :value, ->(v) { MessagePack.pack(v) }, ->(s) { MessagePack.unpack(s) }],
  ["Oj", "Oj", "json", :json, ->(v) { Oj.dump(v, mode: :compat) }, ->(s) { Oj.load(s, mode: :compat) }],
  ["json", "json", "json", :json, ->(v) { JSON.generate(v) }, ->(s) { JSON.parse(s) }],
  ["google-protobuf", "google-protobuf", "protobuf", :pb, nil, nil],
].freeze

MPK_SKIP = lambda do |s|
  u = MPK::Unpacker.new
  u.feed(s)
  u.skip
end
MSGPACK_SKIP = lambda do |s|
  u = MessagePack::Unpacker.new
  u.feed(s)
  u.skip
end

CLOCK = opts[:cpu_time] ? Process::CLOCK_PROCESS_CPUTIME_ID : Process::CLOCK_MONOTONIC

def sample(fn, arg, number)
  t = Process.clock_gettime(CLOCK)
  number.times { fn.call(arg) }
  (Process.clock_gettime(CLOCK) - t) / number
end

# [calls for min_time seconds, seconds a call]
def calibrate(fn, arg, min_time)
  number = 1
  loop do
    t = sample(fn, arg, number)
    return [[1, (min_time / [t, 1e-9].max).to_i].max, t] if t * number >= min_time / 4 || number >= 1 << 20
    number *= 4
  end
end

# Peers whose call takes at most this many times mpk's make mpk's number of calls per sample.
COMMON_COUNT_SPAN = 4.0

# The number of calls per sample of every job. Every sample starts right after GC.start, so what a
# sample pays for garbage collection depends on how much it allocates: a workload whose call
# allocates a large part of the heap's free slots (citm_catalog.json: 22k objects a call) gets a
# minor GC every few calls. With a count of its own per library (30 ms worth), the fastest library
# made the most calls and paid for collections that a slower one's shorter run never reached:
# citm_catalog unpack had mpk at 8 calls with one GC in every sample and Oj at 4 calls with none
# (GC::Profiler; ruby/bench/README.md), which put Oj/mpk at 1.34x where a plain loop of each
# gives 2.0x. So the libraries of a workload and direction make the same number of calls (mpk's),
# the same allocations from the same heap state, and meet the same collections. A peer more than
# COMMON_COUNT_SPAN times slower keeps its own count, to bound the run's time (its ratio is then
# 4x or more: no bar is near it).
def common_counts(calibrated)
  counts = calibrated.transform_values(&:first)
  %i[pack unpack].each do |dir|
    base = calibrated[["mpk", dir]] or next
    calibrated.each do |(label, d), (_, t)|
      next unless d == dir && label != "mpk"
      counts[[label, dir]] = base[0] if t <= base[1] * COMMON_COUNT_SPAN
    end
  end
  counts
end

def median(xs)
  s = xs.sort
  s.size.odd? ? s[s.size / 2] : (s[s.size / 2 - 1] + s[s.size / 2]) / 2.0
end

def fmt_time(t)
  return "-" unless t
  t >= 1e-3 ? format("%.2f ms", t * 1e3) : format("%.2f µs", t * 1e6)
end

# The pack and unpack functions of one library for one workload and the argument each takes, or
# nil when the library has no form of it or does not round-trip it.
def lib_jobs(lib, w, notes)
  label, _, _, form, pack, unpack = lib
  case form
  when :value then input = w.value
  when :json
    return nil unless w.json
    input = w.json
  when :pb
    return nil unless w.proto && !PB_NOTE
    klass = pb_class(w.proto) or return nil
    input = klass.decode(w.pb)
    # the sizes column is protoc's: say so when google-protobuf writes other bytes for the message
    mine = klass.encode(input)
    notes << "google-protobuf encodes #{w.id} in #{mine.bytesize} bytes, not #{w.id}.pb's" unless mine == w.pb
    pack = ->(m) { klass.encode(m) }
    unpack = ->(s) { klass.decode(s) }
  end
  packed = pack.call(input)
  unless unpack.call(packed) == input
    notes << "#{label} does not round-trip #{w.id}: left out"
    return nil
  end
  { pack: [pack, input], unpack: [unpack, packed], bytes: packed.bytesize }
end

BenchRow = Struct.new(:id, :title, :msgpack_bytes)

started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
notes = []
notes << PB_NOTE if PB_NOTE
rows = []
bench_workloads(only: opts[:only]).each do |w|
  # the workloads are the reference: mpk must give their exact bytes and value back
  notes << "mpk's pack of #{w.id} differs from #{w.id}.msgpack" unless MPK.pack(w.value) == w.msgpack
  abort "bench: mpk does not unpack #{w.id}.msgpack to msgpack-ruby's value" unless MPK.unpack(w.msgpack) == w.value
  jobs = {}
  sizes = {}
  LIBS.each do |lib|
    j = lib_jobs(lib, w, notes) or next
    sizes[lib[0]] = j[:bytes]
    jobs[[lib[0], :pack]] = j[:pack]
    jobs[[lib[0], :unpack]] = j[:unpack]
  end
  jobs[["mpk", :skip]] = [MPK_SKIP, w.msgpack]
  jobs[["msgpack-ruby", :skip]] = [MSGPACK_SKIP, w.msgpack]
  numbers = common_counts(jobs.transform_values { |fn, arg| calibrate(fn, arg, opts[:min_time]) })
  times = Hash.new { |h, k| h[k] = [] }
  keys = jobs.keys
  opts[:rounds].times do |round|
    keys.rotate(round).each do |k|
      fn, arg = jobs[k]
      GC.start
      times[k] << sample(fn, arg, numbers[k])
    end
  end
  # only what the report needs, so that the workload's values can be collected before the next one
  rows << [BenchRow.new(w.id, w.title, w.msgpack.bytesize), sizes, times.transform_values { |ts| median(ts) }]
  warn "bench-ruby: #{w.id} done (#{(Process.clock_gettime(Process::CLOCK_MONOTONIC) - started).round} s)"
end

date = Time.now.utc.strftime("%Y-%m-%d %H:%M UTC")
machine = "#{Etc.nprocessors} cores (#{File.read('/proc/cpuinfo')[/^model name\s*:\s*(.+)$/, 1] rescue 'unknown CPU'})"
versions = { "ruby" => RUBY_VERSION, "mpk" => MPK::VERSION, "msgpack-ruby" => MessagePack::VERSION, "Oj" => Oj::VERSION,
             "json" => JSON::VERSION }
versions["google-protobuf"] = Gem.loaded_specs["google-protobuf"]&.version&.to_s || "Debian ruby-google-protobuf" unless PB_NOTE
labels = LIBS.map(&:first)

out = +""
out << "# Ruby: mpk vs msgpack-ruby, Oj, json, google-protobuf\n\n"
out << "#{RUBY_DESCRIPTION}; mpk #{MPK::VERSION} (C core #{MPK::CORE_VERSION}), msgpack-ruby #{MessagePack::VERSION}, " \
       "Oj #{Oj::VERSION}, json #{JSON::VERSION}#{PB_NOTE ? '' : ", google-protobuf #{versions['google-protobuf']}"}; " \
       "#{machine}; #{opts[:rounds]} rounds, median#{opts[:quick] ? ' (QUICK=1: a quick run)' : ''}" \
       "#{opts[:cpu_time] ? ', CPU time (--cpu-time)' : ''}; #{date}.\n"
out << "Ratios are peer time / mpk time (above 1.00: mpk is faster). Workloads from `build/bench-workloads/` " \
       "(`make bench-workloads`); Oj and json work on each workload's JSON form (binary as base64), google-protobuf " \
       "on its message. Each sample starts after GC.start and includes the collections its calls cause; every " \
       "library within #{COMMON_COUNT_SPAN.to_i}× of mpk makes mpk's number of calls per sample (ruby/bench/README.md). " \
       "Reproduce: `make bench-ruby`.\n\n"
%i[pack unpack].each do |dir|
  out << "## #{dir}\n\n| dataset | bytes (msgpack) | #{labels.join(' | ')} |\n|---|---:|#{'---:|' * labels.size}\n"
  rows.each do |w, sizes, med|
    base = med[["mpk", dir]]
    cells = labels.map do |label|
      t = med[[label, dir]]
      next "-" unless t
      label == "mpk" ? fmt_time(t) : format("%s (%.2f×)", fmt_time(t), t / base)
    end
    out << "| #{w.id}: #{w.title} | #{sizes['mpk']} | #{cells.join(' | ')} |\n"
  end
  out << "\n"
end
out << "## sizes (bytes)\n\n| dataset | #{labels.join(' | ')} |\n|---|#{'---:|' * labels.size}\n"
rows.each { |w, sizes, _| out << "| #{w.id} | #{labels.map { |l| sizes[l] || '-' }.join(' | ')} |\n" }
out << "\n## skip vs unpack\n\n| dataset | mpk skip | mpk unpack / skip | msgpack-ruby skip | msgpack-ruby unpack / skip |\n" \
       "|---|---:|---:|---:|---:|\n"
rows.each do |w, _sizes, med|
  ms = med[["mpk", :skip]]
  ps = med[["msgpack-ruby", :skip]]
  out << format("| %s | %s | %.2f× | %s | %.2f× |\n", w.id, fmt_time(ms), med[["mpk", :unpack]] / ms, fmt_time(ps),
                med[["msgpack-ruby", :unpack]] / ps)
end
out << "\nNotes: #{notes.join('; ')}.\n" unless notes.empty?

sidecar_rows = []
rows.each do |w, sizes, med|
  LIBS.each do |label, library, kind, *|
    { pack: "encode", unpack: "decode", skip: "decode" }.each do |dir, op|
      t = med[[label, dir]] or next
      sidecar_rows << { "workload" => w.id, "label" => w.title, "op" => op, "variant" => dir == :skip ? "skip" : "",
                        "library" => library, "kind" => kind, "ns_per_op" => (t * 1e9).round(1),
                        "bytes" => dir == :skip ? w.msgpack_bytes : sizes[label] }
    end
  end
end
sidecar = { "name" => "ruby", "title" => "Ruby (gem mpk)", "date" => date, "machine" => machine, "quick" => opts[:quick],
            "versions" => versions, "rows" => sidecar_rows }

if opts[:out]
  File.write(opts[:out], out)
else
  puts out
end
File.write(opts[:json], JSON.pretty_generate(sidecar) + "\n") if opts[:json]
warn "bench-ruby: done in #{(Process.clock_gettime(Process::CLOCK_MONOTONIC) - started).round} s"

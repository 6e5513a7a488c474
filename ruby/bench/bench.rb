# mpk against msgpack-ruby (Debian's 1.4.2), Oj and json (C extensions), in one process.
#
#   ruby -I lib -I build/lib bench/bench.rb [--rounds N] [--min-time S] [--only NAME] [--out FILE]
#
# Every library packs and unpacks the same values. Each round times every library once per dataset
# and direction, in an order that rotates between rounds so that machine noise hits all alike; a
# sample repeats the call until it lasts at least --min-time seconds. The tables give the median
# time per call and the ratio peer / mpk (2.00: mpk takes half the time). A library whose result
# does not round-trip a dataset is left out of that row ("-"). Not a test: nothing here asserts.
require "json"
require "oj"
require "msgpack"
require "mpk"
require "optparse"
require "etc"

HERE = __dir__

opts = { rounds: 9, min_time: 0.05, only: nil, out: nil }
OptionParser.new do |o|
  o.on("--rounds N", Integer) { |v| opts[:rounds] = v }
  o.on("--min-time S", Float) { |v| opts[:min_time] = v }
  o.on("--only NAME") { |v| opts[:only] = v }
  o.on("--out FILE") { |v| opts[:out] = v }
end.parse!

require_relative "datasets"

LIBS = [
  ["mpk", ->(v) { MPK.pack(v) }, ->(s) { MPK.unpack(s) }],
  ["msgpack", ->(v) { MessagePack.pack(v) }, ->(s) { MessagePack.unpack(s) }],
  ["Oj", ->(v) { Oj.dump(v, mode: :compat) }, ->(s) { Oj.load(s, mode: :compat) }],
  ["json", ->(v) { JSON.generate(v) }, ->(s) { JSON.parse(s) }],
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

def sample(fn, arg, number)
  t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  number.times { fn.call(arg) }
  (Process.clock_gettime(Process::CLOCK_MONOTONIC) - t) / number
end

def calibrate(fn, arg, min_time)
  number = 1
  loop do
    t = sample(fn, arg, number)
    return [1, (min_time / [t, 1e-9].max).to_i].max if t * number >= min_time / 4 || number >= 1 << 20
    number *= 4
  end
end

def median(xs)
  s = xs.sort
  s.size.odd? ? s[s.size / 2] : (s[s.size / 2 - 1] + s[s.size / 2]) / 2.0
end

def fmt_time(t)
  return "-" unless t
  t >= 1e-3 ? format("%.2f ms", t * 1e3) : format("%.2f µs", t * 1e6)
end

def same?(a, b)
  a == b || (a.is_a?(String) && b.is_a?(String) && a.b == b.b)
end

rows = []
datasets.each do |name, value, source|
  next if opts[:only] && !name.include?(opts[:only])
  jobs = {}
  sizes = {}
  LIBS.each do |label, pack, unpack|
    packed = begin
      pack.call(value)
    rescue StandardError
      next # JSON cannot carry binary data
    end
    back = unpack.call(packed)
    # JSON cannot carry binary data: a library that does not round-trip is left out of the row
    next unless back == value
    sizes[label] = packed.bytesize
    jobs[[label, :pack]] = [pack, value]
    jobs[[label, :unpack]] = [unpack, packed]
  end
  packed = MPK.pack(value)
  jobs[["mpk", :skip]] = [MPK_SKIP, packed]
  jobs[["msgpack", :skip]] = [MSGPACK_SKIP, packed]
  numbers = jobs.transform_values { |fn, arg| calibrate(fn, arg, opts[:min_time]) }
  times = Hash.new { |h, k| h[k] = [] }
  keys = jobs.keys
  opts[:rounds].times do |round|
    keys.rotate(round).each do |k|
      fn, arg = jobs[k]
      GC.start
      times[k] << sample(fn, arg, numbers[k])
    end
  end
  rows << [name, source, sizes, times.transform_values { |ts| median(ts) }]
  warn "#{name}: done"
end

out = +""
out << "# Ruby: mpk vs msgpack-ruby, Oj, json\n\n"
out << "#{RUBY_DESCRIPTION}; mpk #{MPK::VERSION} (C core #{MPK::CORE_VERSION}), msgpack-ruby #{MessagePack::VERSION}, " \
       "Oj #{Oj::VERSION}, json #{JSON::VERSION}; #{Etc.nprocessors} CPUs; #{opts[:rounds]} rounds, median; " \
       "#{Time.now.utc.strftime('%Y-%m-%d %H:%M UTC')}.\n"
out << "Ratios are peer time / mpk time (above 1.00: mpk is faster). Reproduce: `make bench-ruby`.\n\n"
%i[pack unpack].each do |dir|
  out << "## #{dir}\n\n| dataset | bytes (msgpack) | mpk | msgpack-ruby | Oj | json |\n|---|---:|---:|---:|---:|---:|\n"
  rows.each do |name, _src, sizes, med|
    base = med[["mpk", dir]]
    cells = LIBS.map(&:first).map do |label|
      t = med[[label, dir]]
      next "-" unless t
      label == "mpk" ? fmt_time(t) : format("%s (%.2f×)", fmt_time(t), t / base)
    end
    out << "| #{name} | #{sizes['mpk']} | #{cells.join(' | ')} |\n"
  end
  out << "\n"
end
out << "## skip vs unpack\n\n| dataset | mpk skip | mpk unpack / skip | msgpack-ruby skip | msgpack-ruby unpack / skip |\n|---|---:|---:|---:|---:|\n"
rows.each do |name, _src, _sizes, med|
  ms = med[["mpk", :skip]]
  ps = med[["msgpack", :skip]]
  out << format("| %s | %s | %.2f× | %s | %.2f× |\n", name, fmt_time(ms), med[["mpk", :unpack]] / ms, fmt_time(ps),
                med[["msgpack", :unpack]] / ps)
end
out << "\nSources: " + rows.map { |n, s, _, _| "#{n}: #{s}" }.join("; ") + ".\n"
if opts[:out]
  File.write(opts[:out], out)
else
  puts out
end

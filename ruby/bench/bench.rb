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
BENCH_DATA = File.expand_path("../../../shared/bench-data", HERE)

opts = { rounds: 9, min_time: 0.05, only: nil, out: nil }
OptionParser.new do |o|
  o.on("--rounds N", Integer) { |v| opts[:rounds] = v }
  o.on("--min-time S", Float) { |v| opts[:min_time] = v }
  o.on("--only NAME") { |v| opts[:only] = v }
  o.on("--out FILE") { |v| opts[:out] = v }
end.parse!

# ------------------------------------------------------------------------------------------------
# Datasets: the ruby-serializers set the seed used, the nativejson-benchmark files when present
# (else generated look-alikes), and the Protocol Buffers comparison's Test1-Test4 messages.
# ------------------------------------------------------------------------------------------------

def rng_str(r, n, alphabet = ("a".."z").to_a + [" "])
  Array.new(n) { alphabet.sample(random: r) }.join
end

def tweet(r, i)
  { "created_at" => "Sun Aug 31 00:29:15 +0000 2014", "id" => 505_874_924_095_815_681 + i,
    "id_str" => (505_874_924_095_815_681 + i).to_s, "text" => rng_str(r, r.rand(20..140)),
    "source" => "<a href=\"https://mobile.twitter.com\" rel=\"nofollow\">Twitter Web App</a>",
    "truncated" => false, "in_reply_to_status_id" => nil,
    "user" => { "id" => r.rand(1..2**40), "name" => rng_str(r, 12), "screen_name" => rng_str(r, 10),
                "location" => rng_str(r, 15), "description" => rng_str(r, r.rand(0..160)),
                "followers_count" => r.rand(0..100_000), "friends_count" => r.rand(0..5000),
                "verified" => false, "profile_image_url" => "http://pbs.twimg.com/profile_images/#{r.rand(10**9)}/x.jpeg" },
    "entities" => { "hashtags" => [], "urls" => [], "user_mentions" => [{ "screen_name" => rng_str(r, 8), "id" => r.rand(2**31) }] },
    "retweet_count" => r.rand(0..1000), "favorite_count" => r.rand(0..1000), "favorited" => false,
    "retweeted" => false, "lang" => "en" }
end

def load_or_generate(name)
  path = File.join(BENCH_DATA, "#{name}.json")
  return [JSON.parse(File.read(path)), "file"] if File.exist?(path)
  r = Random.new(name.sum)
  value = case name
          when "twitter" then { "statuses" => Array.new(100) { |i| tweet(r, i) }, "search_metadata" => { "count" => 100 } }
          when "canada"
            rings = Array.new(480) { Array.new(r.rand(50..2000)) { [r.rand(-141.0..-52.0), r.rand(41.0..83.0)] } }
            { "type" => "FeatureCollection", "features" => [{ "type" => "Feature", "geometry" => { "type" => "Polygon", "coordinates" => rings } }] }
          else Array.new(10_000) { rng_str(r, [0, 3, 8, 12, 20, 40, 80].sample(random: r)) }
          end
  [value, "generated look-alike"]
end

def datasets
  r = Random.new(20_261_122)
  out = []
  out << ["Twitter API response (seed)", { "statuses" => Array.new(20) { |i| tweet(r, i) } }, "generated"]
  out << ["image record (seed)", { "id" => 42, "name" => "photo.jpg", "width" => 640, "height" => 480,
                                  "tags" => %w[cat sofa], "created" => 1_700_000_000, "data" => r.bytes(6 * 1024) }, "generated"]
  out << ["integer array (seed)", Array.new(10_000) { r.rand(-2**31..2**31) }, "generated"]
  out << ["GeoJSON (seed)", { "type" => "FeatureCollection", "features" => Array.new(50) do |i|
    { "type" => "Feature", "properties" => { "name" => "f#{i}", "pop" => r.rand(10**6) },
      "geometry" => { "type" => "Polygon", "coordinates" => [Array.new(20) { [r.rand * 360 - 180, r.rand * 180 - 90] }] } }
  end }, "generated"]
  out << ["3D model (seed)", { "name" => "mesh", "vertices" => Array.new(3 * 5000) { r.rand * 100 - 50 },
                               "normals" => Array.new(3 * 5000) { r.rand * 2 - 1 }, "faces" => Array.new(3 * 9000) { r.rand(5000) } }, "generated"]
  %w[twitter citm_catalog canada].each do |name|
    value, source = load_or_generate(name)
    out << ["#{name}.json", value, source]
  end
  out << ["Test1 {a: 150}", { "a" => 150 }, "protobuf comparison"]
  out << ["Test2 {b: \"testing\"}", { "b" => "testing" }, "protobuf comparison"]
  out << ["Test3 {c: {a: 150}}", { "c" => { "a" => 150 } }, "protobuf comparison"]
  out << ["Test4 {d: [3, 270, 86942]}", { "d" => [3, 270, 86_942] }, "protobuf comparison"]
  out
end

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

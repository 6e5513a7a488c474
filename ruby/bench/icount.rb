# Instructions per call (valgrind's callgrind), mpk vs msgpack-ruby, on bench.rb's datasets.
#
#   ruby -I lib -I build/lib bench/icount.rb [--only NAME] [--ids ID,ID] [--libs mpk,msgpack] [--dirs pack,unpack]
#
# --ids takes any workloads of the manifest (default: datasets.rb's ICOUNT_WORKLOAD_IDS).
#
# Wall-clock times on a loaded, shared machine vary by tens of percent between runs; instruction
# counts do not (repeat runs agree within about 1 %), so this is the guide for work on the extension.
# Each library runs in one `valgrind --tool=callgrind` child that loads the datasets (Marshal, written
# once by the parent) and, for every dataset and direction, calls the operation once to warm up, then
# N times inside `catch`; only what runs under rb_catch_obj is counted (--toggle-collect), one
# profile per catch (--dump-after), so start-up and data loading are not. GC is included, amortized
# over the N calls. Not a test: nothing asserts.
require "optparse"
require "tmpdir"

opts = { only: nil, ids: nil, libs: %w[mpk msgpack], dirs: %w[pack unpack], child: nil }
OptionParser.new do |o|
  o.on("--only NAME") { |v| opts[:only] = v }
  o.on("--ids LIST") { |v| opts[:ids] = v.split(",") }
  o.on("--libs LIST") { |v| opts[:libs] = v.split(",") }
  o.on("--dirs LIST") { |v| opts[:dirs] = v.split(",") }
  o.on("--child FILE,LIB,JOBS") { |v| opts[:child] = v.split(",") }
end.parse!

# Child (under valgrind): every (dataset, direction) of one library, each in its own `catch`;
# --dump-after=rb_catch_obj writes one profile per catch, in this order.
if opts[:child]
  file, lib, jobs = opts[:child]
  sets = Marshal.load(File.binread(file))
  if lib == "mpk"
    require "mpk"
    pack = ->(v) { MPK.pack(v) }
    unpack = ->(s) { MPK.unpack(s) }
  else
    require "msgpack"
    pack = ->(v) { MessagePack.pack(v) }
    unpack = ->(s) { MessagePack.unpack(s) }
  end
  jobs.split(";").each do |job|
    index, dir, n = job.split(":")
    name, value = sets[index.to_i]
    packed = pack.call(value)
    abort "#{lib} does not round-trip #{name}" unless unpack.call(packed) == value
    fn, arg = dir == "pack" ? [pack, value] : [unpack, packed]
    fn.call(arg)
    GC.start
    n = n.to_i
    catch(:icount) { n.times { fn.call(arg) } }
  end
  exit 0
end

require_relative "datasets"
require "json"
sets = (opts[:ids] ? datasets(opts[:ids]) : datasets).map { |name, value, _src| [name, value] }
here = File.expand_path("..", __dir__)
incs = $LOAD_PATH.grep(%r{/(lib|build/lib)\z}).flat_map { |p| ["-I", p] }
Dir.mktmpdir("mpk-icount") do |tmp|
  data = File.join(tmp, "data.bin")
  File.binwrite(data, Marshal.dump(sets))
  jobs = []
  sets.each_with_index do |(name, value), i|
    next if opts[:only] && !name.include?(opts[:only])
    size = (JSON.generate(value).bytesize rescue Marshal.dump(value).bytesize)
    n = (4_000_000 / [size, 1].max).clamp(5, 5000)
    opts[:dirs].each { |dir| jobs << [i, dir, n] }
  end
  counts = {}
  # one valgrind child per library, both at once (each is single-threaded)
  opts[:libs].map do |lib|
    out = File.join(tmp, "cg.#{lib}")
    pid = spawn("valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=rb_catch_obj",
                "--dump-after=rb_catch_obj", "--callgrind-out-file=#{out}", "ruby", *incs, __FILE__, "--child",
                "#{data},#{lib},#{jobs.map { |j| j.join(':') }.join(';')}", out: File::NULL, err: File::NULL, chdir: here)
    [lib, out, pid]
  end.each do |lib, out, pid|
    Process.wait(pid)
    abort "icount: the #{lib} child failed" unless $?.success?
    dumps = Dir["#{out}.*"].sort_by { |f| f[/\.(\d+)\z/, 1].to_i }
    abort "icount: #{dumps.size} profiles from #{lib}, #{jobs.size} expected" if dumps.size < jobs.size
    # the last ones are the jobs' (OptionParser's own catch comes first)
    jobs.zip(dumps.last(jobs.size)).each do |(i, dir, n), f|
      counts[[i, lib, dir]] = File.read(f)[/^(?:summary|totals): (\d+)/, 1].to_f / n
    end
  end
  rows = jobs.map(&:first).uniq.map do |i|
    cells = {}
    opts[:libs].product(opts[:dirs]) { |lib, dir| cells[[lib, dir]] = counts[[i, lib, dir]] }
    [sets[i][0], cells]
  end
  fmt = ->(v) { v ? (v >= 1e6 ? format("%.2fM", v / 1e6) : format("%.1fk", v / 1e3)) : "-" }
  puts "| dataset | pack mpk | pack msgpack-ruby | ratio | unpack mpk | unpack msgpack-ruby | ratio |"
  puts "|---|---:|---:|---:|---:|---:|---:|"
  rows.each do |name, c|
    r = ->(d) { c[["mpk", d]] && c[["msgpack", d]] ? format("%.2f×", c[["msgpack", d]] / c[["mpk", d]]) : "-" }
    puts "| #{name} | #{fmt.(c[%w[mpk pack]])} | #{fmt.(c[%w[msgpack pack]])} | #{r.('pack')} | " \
         "#{fmt.(c[%w[mpk unpack]])} | #{fmt.(c[%w[msgpack unpack]])} | #{r.('unpack')} |"
  end
end

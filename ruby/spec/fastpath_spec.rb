require_relative "spec_helper"
require "msgpack"

# The extension's speed tricks (each a named function in ext/mpk with its measurement) and the
# general paths they stand in front of must give the same results. Values are compared with Debian's
# msgpack-ruby, whose code shares nothing with mpk's.
RSpec.describe "fast paths" do
  # every head read_number_inline takes, at each distance from the end of the input: it decodes
  # only with 9 bytes left, so the last values go through mpk_reader_next instead
  NUMBERS = [1.5, -0.0, Float::INFINITY, 1e300, 200, 65_000, 4_000_000_000, -100, -30_000, -2_000_000_000,
             2**31 - 1, -2**31, 2**32 - 1, 0, -1, 127].freeze

  it "decodes float 64 and int/uint 8-32 the same wherever they sit" do
    (0..NUMBERS.size).each do |cut|
      value = NUMBERS.rotate(cut)
      bytes = MessagePack.pack(value)
      expect(MPK.unpack(bytes)).to eq(value)
      expect(MPK.unpack(bytes).map(&:class)).to eq(value.map(&:class))
      NUMBERS.each { |x| expect(MPK.unpack(MessagePack.pack(x))).to eql(x) }
      # as map values and inside a map in an array, with a number last
      h = { "a" => value, "b" => value.last }
      expect(MPK.unpack(MessagePack.pack([h, h]))).to eq([h, h])
    end
  end

  it "reports a number cut by the end of the input as truncated, at the array that owes it" do
    bytes = MessagePack.pack([1, 2.5])
    (1...bytes.bytesize).each do |n|
      expect { MPK.unpack(bytes.byteslice(0, n)) }.to raise_error(MPK::TruncatedError) { |e| expect(e.offset).to eq(n < 3 ? 0 : 2) }
    end
  end

  it "closes containers that end with an inline number" do
    value = [[1.5], [[2.5]], { "k" => [300] }, [[[70_000]]], -200]
    expect(MPK.unpack(MessagePack.pack(value))).to eq(value)
    u = MPK::Unpacker.new
    3.times { u.feed(MessagePack.pack(value)) }
    expect(u.each.to_a).to eq([value] * 3)
  end

  it "makes value Strings in UTF-8 or binary, unfrozen, with a correct coderange" do
    value = { "s" => "héllo", "a" => "plain", "b" => "\xff\x00".b, "bad" => "\xff".dup.force_encoding("UTF-8") }
    back = MPK.unpack(MessagePack.pack(value))
    expect(back).to eq(value)
    expect(back["s"].encoding).to eq(Encoding::UTF_8)
    expect(back["s"]).to be_valid_encoding
    expect(back["a"]).to be_ascii_only
    expect(back["s"]).not_to be_ascii_only
    expect(back["b"].encoding).to eq(Encoding::BINARY)
    expect(back["bad"]).not_to be_valid_encoding
    expect(back["s"]).not_to be_frozen
    back["s"] << "!"
    expect(back["s"]).to eq("héllo!")
  end

  it "deduplicates keys through the key cache, colliding slots and long keys included" do
    keys = Array.new(600) { |i| "key#{i}" } + ["k" * 64, "k" * 65, "x" * 200, "", "é"]
    h = keys.each_with_index.to_h
    bytes = MessagePack.pack([h, h])
    a, b = MPK.unpack(bytes)
    expect(a).to eq(h)
    a.keys.zip(b.keys).each do |x, y|
      expect(x).to be_frozen
      expect(x).to equal(y)
      expect(x).to equal(-x.dup)
    end
    sym = MPK.unpack(bytes, symbolize_keys: true)
    expect(sym[0].keys).to eq(keys.map(&:to_sym))
    # a binary key with the same bytes as a str key stays binary
    mixed = MPK.unpack("\x92\x81\xa1k\x01\x81\xc4\x01k\x02".b)
    expect(mixed.map { |m| m.keys[0].encoding }).to eq([Encoding::UTF_8, Encoding::BINARY])
  end

  # key_probe (ext/mpk/rb_mpk.c): keys whose hashed slot is the same sit side by side, so records
  # whose keys collide find every key from the second decode on; the direct-mapped fallback
  # (MPK._key_probe = false) gives the same keys
  [true, false].each do |probe|
    it "finds keys that share a slot from one decode to the next (key_probe #{probe})" do
      MPK._key_probe = probe
      # twitter.json's keys: 94 in 256 slots, a sixth of them sharing a slot with another
      keys = %w[id url in_reply_to_screen_name metadata profile_sidebar_border_color resize iso_language_code
                in_reply_to_status_id_str time_zone in_reply_to_status_id contributors in_reply_to_user_id hashtags
                is_translator is_translation_enabled profile_background_image_url notifications profile_image_url
                max_id profile_sidebar_fill_color geo profile_text_color retweeted]
      records = Array.new(20) { |i| keys.to_h { |k| [k, i] } }
      bytes = MPK.pack(records)
      expect(MPK.unpack(bytes)).to eq(records)
      before = MPK._key_cache_misses
      back = MPK.unpack(bytes)
      expect(back).to eq(records)
      expect(back.flat_map(&:keys)).to all(be_frozen)
      expect(back[3].keys.zip(back[7].keys)).to all(satisfy { |x, y| x.equal?(y) && x.equal?(-x.dup) })
      misses = MPK._key_cache_misses - before
      if probe
        expect(misses).to eq(0)
      else
        expect(misses).to be > 0 # the shape key_probe is for: keys evicting each other in every record
      end
      sym = MPK.unpack(bytes, symbolize_keys: true)
      expect(sym[5].keys).to eq(keys.map(&:to_sym))
    ensure
      MPK._key_probe = true
    end
  end

  # hash_presize (ext/mpk/rb_mpk.c): maps become Hashes made at their final size; the fallback
  # (MPK._hash_presize = false) makes them with rb_hash_new
  it "makes Hashes at their final size on CRuby 3.1" do
    expect(MPK._hash_presize?).to be(true) if RUBY_ENGINE == "ruby" && RUBY_VERSION.start_with?("3.1.")
  end

  [true, false].each do |presize|
    it "builds maps of every size the same, duplicate keys included (hash_presize #{presize})" do
      MPK._hash_presize = presize
      (0..70).each do |n|
        h = (0...n).to_h { |i| [i.even? ? "k#{i}" : i, [i, "v" * (i % 5)]] }
        bytes = MessagePack.pack([h, { "in" => h }])
        back = MPK.unpack(bytes)
        expect(back).to eq([h, { "in" => h }])
        expect(back[0].keys).to eq(h.keys)
        back[0]["new"] = 1 # a Hash made at its size still grows
        expect(back[0].size).to eq(n + 1)
        # a map that repeats a key: the last value wins, in the first key's place, as msgpack-ruby
        next if n < 2
        pairs = (0...n).map { |i| [MessagePack.pack("k#{i % (n - 1)}"), MessagePack.pack(i)] }
        dup = (n < 16 ? [0x80 | n].pack("C") : [0xde, n].pack("Cn")) + pairs.flatten.join
        expect(MPK.unpack(dup, symbolize_keys: false)).to eq(MessagePack.unpack(dup))
        expect(MPK.unpack(dup).keys).to eq(MessagePack.unpack(dup).keys)
      end
    ensure
      MPK._hash_presize = true
    end
  end

  it "keeps the decode's values alive under GC.stress" do
    h = { "a" => [1.5, 300, "x" * 40], "b" => { "c" => -70_000.5 } }
    bytes = MessagePack.pack([h] * 20)
    GC.stress = true
    begin
      back = MPK.unpack(bytes)
    ensure
      GC.stress = false
    end
    expect(back).to eq([h] * 20)
  end
end

RSpec.describe "fast paths when packing" do
  it "decodes flonums itself on this platform (64-bit CRuby)" do
    x = 1.5
    flonums = x.equal?(x * 1.0) # flonums are immediates: the same value is the same object
    expect(MPK._flonum_inline?).to eq(flonums)
  end

  it "packs every Float bit for bit, flonums and heap Floats alike" do
    r = Random.new(42)
    floats = [0.0, -0.0, 1.0, -1.5, 0.1, 1e300, -1e-300, 5e-324, Float::INFINITY, -Float::INFINITY,
              Float::MAX, Float::MIN, 2.0**-255, 2.0**256, 1.7976931348623157e308] +
             Array.new(2000) { [r.bytes(8)].pack("a8").unpack1("E") }.reject(&:nan?) +
             Array.new(500) { (r.rand - 0.5) * 10.0**r.rand(-20..20) }
    floats.each_slice(100) do |chunk|
      expect(MPK.pack(chunk)).to eq(MessagePack.pack(chunk))
      expect(MPK.pack({ "k" => chunk[0], "l" => chunk })).to eq(MessagePack.pack({ "k" => chunk[0], "l" => chunk }))
    end
    floats.first(50).each { |f| expect(MPK.pack(f)).to eq([0xcb, f].pack("CG")) }
    nan = MPK.unpack(MPK.pack(Float::NAN))
    expect(nan).to be_nan
  end

  it "writes every str length around the fixstr limit the same, in all buffer positions" do
    text = "abcdefghijklmnopqrstuvwxyzé0123456789ABCDEFGHIJ"
    (0..text.size).each do |n|
      s = text[0, n]
      (0..40).each do |pad| # shifts the room left in the packer's buffer
        v = ["x" * pad, { s => s }, s, s.to_sym]
        expect(MPK.pack(v)).to eq(MessagePack.pack(v))
      end
    end
  end
end

# fixnum_by_width (ext/mpk/rb_packer.c): Fixnums written with branches on their width only, not
# their sign; MPK._fixnum_by_width = false takes the core's mpk_write_int.
RSpec.describe "Fixnums written by width" do
  def with_by_width(on)
    MPK._fixnum_by_width = on
    yield
  ensure
    MPK._fixnum_by_width = true
  end

  edges = [0, 31, 32, 127, 128, 255, 256, 32_767, 32_768, 65_535, 65_536, 2**31 - 1, 2**31, 2**32 - 1, 2**32,
           2**62 - 1].flat_map { |e| [e - 1, e, e + 1] }.select { |e| e >= 0 }
  edges += [-1, -31, -32, -33, -127, -128, -129, -32_767, -32_768, -32_769, -2**31 + 1, -2**31, -2**31 - 1,
            -2**62 + 1, -2**62]
  edges = edges.select { |e| e.is_a?(Integer) && e.between?(-2**62, 2**62 - 1) }.uniq

  it "is on by default" do
    expect(MPK._fixnum_by_width?).to be(true)
  end

  it "writes every width boundary of both signs in the shortest form, as msgpack-ruby and the core do" do
    edges.each do |e|
      want = MessagePack.pack(e)
      expect(MPK.pack(e)).to eq(want), "#{e}"
      expect(with_by_width(false) { MPK.pack(e) }).to eq(want)
      # as an Array element, a Hash value, in a number tuple, through a Packer object
      v = [e, { "k" => e }, [e, -e - 1], [e] * 20]
      expect(MPK.pack(v)).to eq(MessagePack.pack(v)), "#{e}"
      expect(MPK::Packer.new.write(v).to_s).to eq(MessagePack.pack(v))
    end
  end

  it "packs random mixed-sign Integers of every width, across the buffer's growth, both ways" do
    r = Random.new(7)
    ints = Array.new(30_000) do
      bits = r.rand(0..62)
      m = r.rand(2**bits)
      r.rand(2).zero? ? m : -m - 1
    end
    want = MessagePack.pack(ints)
    expect(MPK.pack(ints)).to eq(want)
    expect(with_by_width(false) { MPK.pack(ints) }).to eq(want)
    expect(MPK.unpack(MPK.pack(ints))).to eq(ints)
    pk = MPK::Packer.new
    ints.each { |i| pk.write(i) }
    expect(pk.to_s).to eq(ints.map { |i| MessagePack.pack(i) }.join.b)
  end
end

RSpec.describe "containers inside containers" do
  class FastPathArray < Array; end
  class FastPathHash < Hash; end
  class FastPathString < String; end
  class FastPathMsg
    def to_msgpack(pk) = pk.write("custom")
  end

  it "packs plain nested Arrays and Hashes like msgpack-ruby" do
    v = [[1.5, [2, [3.25, "x"]]], { "a" => { "b" => [[]] } }, [{ "c" => [{}] }], { "d" => [[-1, nil]] }]
    expect(MPK.pack(v)).to eq(MessagePack.pack(v))
  end

  it "sends Array and Hash subclasses inside containers to their registered types" do
    f = MPK::Factory.new
    f.register_type(1, FastPathArray, packer: ->(a) { "A#{a.size}" }, unpacker: ->(s) { s })
    f.register_type(2, FastPathHash, packer: ->(h) { "H#{h.size}" }, unpacker: ->(s) { s })
    f.register_type(3, FastPathString, packer: ->(s) { "S#{s}" }, unpacker: ->(s) { s })
    v = [FastPathArray[1, 2], { "k" => FastPathHash[1, 2], "s" => FastPathString.new("q") }, [[FastPathArray[]]]]
    expect(f.load(f.dump(v))).to eq(["A2", { "k" => "H1", "s" => "Sq" }, [["A0"]]])
  end

  it "packs unregistered subclasses as their core type, and calls to_msgpack inside containers" do
    h = FastPathHash.new { |hh, k| hh[k] = 0 } # a default proc is not packed
    h["a"] = 1
    v = [FastPathArray[1, [2]], { "h" => h, "m" => FastPathMsg.new, "s" => FastPathString.new("z") }]
    expect(MPK.unpack(MPK.pack(v))).to eq([[1, [2]], { "h" => { "a" => 1 }, "m" => "custom", "s" => "z" }])
  end

  it "reports the path of a bad value deep in nested containers" do
    v = [[1, [2, { "k" => [Object.new] }]]]
    expect { MPK.pack(v) }.to raise_error(MPK::UnsupportedTypeError, /Object at \$\[0\]\[1\]\[1\]\["k"\]\[0\]/)
  end

  it "counts depth through the direct calls" do
    deep = [1]
    1100.times { deep = [deep] }
    expect { MPK.pack(deep) }.to raise_error(MPK::StackError)
    deeph = { "a" => 1 }
    1100.times { deeph = { "a" => deeph } }
    expect { MPK.pack(deeph) }.to raise_error(MPK::StackError)
    ok = [1]
    1000.times { ok = [ok] }
    expect(MPK.unpack(MPK.pack(ok))).to eq(ok)
  end
end

# hash_each_direct (ext/mpk/rb_packer.c) reads CRuby 3.1's Hash tables itself; MPK._hash_direct = false
# sends every Hash through rb_hash_foreach, the general path.
RSpec.describe "Hash pairs read from the tables" do
  def with_hash_direct(on)
    MPK._hash_direct = on
    yield
  ensure
    MPK._hash_direct = true
  end

  it "is on for CRuby 3.1 (the layouts it knows), off elsewhere" do
    expect(MPK._hash_direct?).to eq(RUBY_ENGINE == "ruby" && RUBY_VERSION.start_with?("3.1."))
    with_hash_direct(false) { expect(MPK._hash_direct?).to be(false) }
    expect(MPK._hash_direct?).to eq(RUBY_VERSION.start_with?("3.1."))
  end

  it "packs Hashes of every size, with deleted and re-inserted pairs, like rb_hash_foreach and msgpack-ruby" do
    r = Random.new(7)
    (0..40).each do |size|
      3.times do
        h = {}
        size.times { |i| h[i.even? ? "k#{i}" : i * 3] = [i, "v" * r.rand(0..40), 1.5 * i, nil, [i]][r.rand(5)] }
        h.keys.sample(r.rand(0..[size, 5].min), random: r).each { |k| h.delete(k) }
        h["late"] = true if r.rand(2) == 1
        h.compare_by_identity if size == 20
        v = [h, { "in" => h }, [h, h]]
        direct = MPK.pack(v)
        expect(with_hash_direct(false) { MPK.pack(v) }).to eq(direct)
        expect(direct).to eq(MessagePack.pack(v))
        expect(MPK.unpack(direct)).to eq(v) unless h.compare_by_identity?
      end
    end
  end

  # a to_msgpack that changes the Hash being packed
  class HashChanger
    def initialize(&blk) = @blk = blk
    def to_msgpack(pk)
      @blk.call
      pk.write(0)
    end
  end

  [3, 20].each do |size|
    [true, false].each do |direct|
      it "raises, reading nothing stale, when a callback adds or deletes pairs (#{size} pairs, direct: #{direct})" do
        with_hash_direct(direct) do
          h = (1..size).to_h { |i| ["k#{i}", i] }
          h["cb"] = HashChanger.new { 30.times { |i| h["new#{i}"] = i } }
          expect { MPK.pack(h) }.to raise_error(RuntimeError, /hash/i)
          h = (1..size).to_h { |i| ["k#{i}", i] }
          h["cb"] = HashChanger.new { h.delete("z") } # a pair not packed yet
          h["z"] = 1
          expect { MPK.pack(h) }.to raise_error(RuntimeError, /Hash changed/)
          h = (1..size).to_h { |i| ["k#{i}", i] }
          h["cb"] = HashChanger.new { h.clear; GC.start; GC.compact if GC.respond_to?(:compact) }
          h["z"] = 1
          expect { MPK.pack(h) }.to raise_error(RuntimeError, /Hash changed/)
        end
      end
    end
  end

  it "packs a Hash whose callbacks change only values, or freeze it, without complaint" do
    h = { "a" => 1, "b" => 2 }
    # GC.start moves a young Hash's pairs out of CRuby 3.1's transient heap; the new small Hashes
    # then reuse that memory, so pairs read from the old place would be wrong
    h["cb"] = HashChanger.new { h["a"] = 5; GC.start; @junk = Array.new(2000) { |i| { "x" => i, "y" => -i } } }
    h["z"] = "last"
    expect(MPK.pack(h)).to eq(MessagePack.pack({ "a" => 1, "b" => 2, "cb" => 0, "z" => "last" }))
    g = (1..20).to_h { |i| ["k#{i}", i] }
    g["cb"] = HashChanger.new { g.freeze }
    g["z"] = 1
    expect(MPK.unpack(MPK.pack(g))).to eq(g.merge("cb" => 0))
  end
end

# pack_number_tuple (ext/mpk/rb_packer.c): short Arrays of Fixnums and flonums inside containers.
RSpec.describe "short number Arrays inside containers" do
  it "packs every length and every kind of element at every position like msgpack-ruby" do
    others = [1e300 * 10, 2**63 + 5, -2**40, "s", nil, true, :sym, [1.5], {}, 0.1, -7]
    (0..17).each do |n|
      base = Array.new(n) { |i| i.even? ? i * 0.25 : -i }
      ([nil] + others).each do |other|
        (0...[n, 1].max).each do |at|
          t = base.dup
          t[at] = other if other && n.positive?
          v = [t, { "k" => t }, [[t, t]]]
          expect(MPK.pack(v)).to eq(MessagePack.pack(v))
        end
      end
    end
  end

  it "keeps the depth limit and the output buffer right through them" do
    ok = [1.5, 2]
    1022.times { ok = [ok] }
    expect(MPK.unpack(MPK.pack(ok))).to eq(ok)
    deep = [1.5, 2]
    1024.times { deep = [deep] }
    expect { MPK.pack(deep) }.to raise_error(MPK::StackError)
    # tuples across the output's growth boundaries, in a Packer and through MPK.pack
    pairs = Array.new(5000) { |i| [i * 0.5, -i, i] }
    expect(MPK.pack(pairs)).to eq(MessagePack.pack(pairs))
    pk = MPK::Packer.new
    pairs.each_slice(7) { |s| pk.write(s) }
    expect(pk.to_s).to eq(pairs.each_slice(7).map { |s| MessagePack.pack(s) }.join.b)
  end
end

# pack_scratch (ext/mpk/rb_packer.c): MPK.pack's first 4 KiB are on its C stack.
RSpec.describe "MPK.pack's scratch buffer" do
  class KeepsPacker
    class << self
      attr_accessor :kept
    end
    def initialize(payload) = @payload = payload
    def to_msgpack(pk)
      KeepsPacker.kept = pk
      pk.write(@payload)
    end
  end

  it "gives outputs of every size around 4 KiB and the embedded-String size their exact bytes" do
    [0, 1, 20, 21, 22, 23, 24, 100, 4090, 4093, 4094, 4095, 4096, 4097, 5000, 20_000].each do |n|
      [["x" * n], ["x" * n, { "a" => [1.5] * 3 }], "y".b * n].each do |v|
        out = MPK.pack(v)
        expect(out).to eq(MessagePack.pack(v))
        expect(out.encoding).to eq(Encoding::BINARY)
        expect(out).not_to be_frozen
      end
    end
  end

  it "never lets Ruby code keep the scratch: a packer kept by to_msgpack still works afterwards" do
    v = [1, KeepsPacker.new("inner"), 2]
    expect(MPK.pack(v)).to eq("\x93\x01\xa5inner\x02".b)
    kept = KeepsPacker.kept
    expect(kept).to be_a(MPK::Packer)
    # MPK.pack took its output away; the C stack the scratch lived on is reused by these calls,
    # and the kept packer, with a buffer of its own, is empty and usable
    100.times { MPK.pack(["z" * 3000, { "q" => [2.5, 3] }]) }
    expect(kept.to_s).to eq("")
    kept.write(3).write("w" * 5000)
    expect(kept.to_s).to eq("\x03".b + MessagePack.pack("w" * 5000))
  end

  it "leaves nothing reachable that points at the scratch when a pack raises" do
    20.times { expect { MPK.pack(["a" * 100, Object.new]) }.to raise_error(MPK::UnsupportedTypeError) }
    expect(ObjectSpace.each_object(MPK::Packer).all? { |pk| pk.to_s.is_a?(String) }).to be(true)
    GC.start
    expect(MPK.pack(["b" * 10])).to eq(MessagePack.pack(["b" * 10]))
  end
end

require "objspace"

# Strs and bins of 256 bytes or more are copy-on-write Strings sharing MPK.unpack's input: anywhere
# in it with share_body (ext/mpk/rb_mpk.c, CRuby 3.1, checked at load), only at its end with
# share_tail (the public API; MPK._share_direct = false forces it). A shared String has no bytes of
# its own: ObjectSpace.memsize_of is the object's 40 bytes.
RSpec.describe "strs and bins shared with the input" do
  def with_share_direct(on)
    MPK._share_direct = on
    yield
  ensure
    MPK._share_direct = true
  end

  def shared?(s) = ObjectSpace.memsize_of(s) < 200

  it "is on for CRuby 3.1 and can be switched off" do
    expect(MPK._share_direct?).to eq(RUBY_ENGINE == "ruby" && RUBY_VERSION.start_with?("3.1."))
    with_share_direct(false) { expect(MPK._share_direct?).to be(false) }
    expect(MPK._share_direct?).to eq(RUBY_VERSION.start_with?("3.1."))
  end

  [true, false].each do |direct|
    it "gives the same values, encodings and independent Strings at and around 256 bytes (share_direct #{direct})" do
      with_share_direct(direct) do
        [255, 256, 257, 1000, 70_000].each do |n|
          bin = Random.new(n).bytes(n)
          str = ("é" * n)[0, n / 2] + "z" * (n - (n / 2) * 2)
          [[1, bin], [str], { "k" => bin }, [bin, 1], [str, nil], bin, str, { "k" => str, "z" => 1 }].each do |v|
            input = MessagePack.pack(v)
            [input, input.dup.force_encoding("UTF-8"), input.dup.force_encoding("UTF-16LE"), input.dup.freeze].each do |src|
              src.valid_encoding? # a coderange known for the input: not the value's
              out = MPK.unpack(src)
              expect(out).to eq(v)
              got = out.is_a?(Array) ? out.find { |x| x.is_a?(String) } : out.is_a?(Hash) ? out["k"] : out
              want = v.is_a?(Array) ? v.find { |x| x.is_a?(String) } : v.is_a?(Hash) ? v["k"] : v
              expect(got.encoding).to eq(want.encoding)
              expect(got.valid_encoding?).to be(true)
              expect(got.hash).to eq(want.hash)
              expect(got).not_to be_frozen
              # shared when 256 bytes or more, and (share_tail) last in the input
              last = !(v.is_a?(Array) && !v.last.is_a?(String)) && !(v.is_a?(Hash) && v.size > 1)
              expect(shared?(got)).to eq(MPK._share_direct? ? n >= 256 : n >= 256 && last), "#{n} #{v.inspect[0, 40]}"
              # the two Strings do not change each other
              before = src.dup
              got << "tail" << "\x00"
              expect(got.byteslice(0, want.bytesize)).to eq(want.b.force_encoding(got.encoding))
              expect(src).to eq(before)
              src2 = input.dup
              out2 = MPK.unpack(src2)
              src2.replace("changed")
              expect(out2).to eq(v)
              src3 = input.dup
              out3 = MPK.unpack(src3)
              src3.setbyte(src3.bytesize - 1, 0) # written in place
              src3 << "more"
              expect(out3).to eq(v)
            end
          end
        end
      end
    end
  end

  it "shares every long str and bin of a message, in maps and arrays, with the right bytes" do
    rng = Random.new(7)
    v = { "image" => rng.bytes(6144), "name" => "n" * 300, "list" => Array.new(5) { |i| ["ü" * (128 + i), rng.bytes(256 + i), i] },
          "short" => "s" * 255, "last" => 1 }
    input = MessagePack.pack(v)
    out = MPK.unpack(input)
    expect(out).to eq(v)
    longs = [out["image"], out["name"]] + out["list"].flat_map { |a| a[0, 2] }
    expect(longs.map { |s| shared?(s) }.uniq).to eq([MPK._share_direct?])
    expect(shared?(out["short"])).to be(false)
    # each is its own value: writing one changes no other, nor the input
    longs.each_with_index { |s, i| s.setbyte(0, i) }
    expect(longs.each_with_index.map { |s, i| s.getbyte(0) == i }.uniq).to eq([true])
    expect(MPK.unpack(input)).to eq(v)
    # the C-string functions copy what has no terminating NUL after it
    num = MPK.unpack(MessagePack.pack(["1" * 300, "2" * 300]))
    expect(num[0].to_i).to eq(("1" * 300).to_i)
    expect(num[0].to_f).to eq(("1" * 300).to_f)
    expect(num[0].to_sym).to eq(("1" * 300).to_sym)
    expect { File.exist?(num[0]) }.not_to raise_error
    expect(num[0].unpack1("a*")).to eq("1" * 300)
  end

  it "keeps shared values intact across GC.compact and GC.stress, the input gone" do
    values = Array.new(20) { |i| [("v#{i}" * 100), ("b" * (300 + i)).b] }
    held = values.map { |v| MPK.unpack(MessagePack.pack([v, { "k" => v[1] }, 1])) }
    GC.start
    GC.verify_compaction_references(double_heap: true, toward: :empty)
    GC.compact
    held.each_with_index { |h, i| expect(h).to eq([values[i], { "k" => values[i][1] }, 1]) }
    GC.stress = true
    begin
      got = MPK.unpack(MessagePack.pack([values[0], values[1], 2]))
      got[0][0] << "x"
      got.push(MPK.unpack(MessagePack.pack({ "a" => "z" * 400, "b" => "y" * 500 }.freeze)))
    ensure
      GC.stress = false
    end
    expect(got).to eq([values[0].dup.tap { |a| a[0] += "x" }, values[1], 2, { "a" => "z" * 400, "b" => "y" * 500 }])
  end

  it "copies from String subclasses and from Unpacker buffers" do
    sub = Class.new(String)
    v = ["x" * 300, 1]
    out = MPK.unpack(sub.new(MessagePack.pack(v)))
    expect(out).to eq(v)
    expect(out[0].class).to eq(String)
    u = MPK::Unpacker.new
    u.feed(MessagePack.pack(v))
    expect(shared?(u.read[0])).to be(false)
  end

  it "keeps freeze, symbolize_keys and the Unpacker's own copies as they were" do
    bin = "b".b * 300
    expect(MPK.unpack(MessagePack.pack([bin]), freeze: true)[0]).to be_frozen
    u = MPK::Unpacker.new
    data = MessagePack.pack([bin])
    u.feed(data)
    data.replace("x")
    expect(u.read).to eq([bin])
  end
end

# body_refs (ext/mpk/rb_packer.c): MPK.pack leaves strs and bins of 256 bytes or more out of its
# buffer and copies them once into the result; MPK._body_refs = false copies every body into the
# buffer (the fallback). Before Ruby code may run (to_msgpack, registered types) the bodies are
# copied into the buffer, so a callback that changes a String packed before it changes nothing.
RSpec.describe "MPK.pack's referenced bodies" do
  def with_body_refs(on)
    MPK._body_refs = on
    yield
  ensure
    MPK._body_refs = true
  end

  # every combination of the three large-output tricks (each false is that trick's fallback)
  def each_setting
    [true, false].product([true, false], [true, false], [true, false]).each do |refs, spill, prefault, reuse|
      MPK._body_refs = refs
      MPK._warm_spill = spill
      MPK._prefault = prefault
      MPK._reuse_packer = reuse
      yield
    end
  ensure
    MPK._body_refs = MPK._warm_spill = MPK._prefault = MPK._reuse_packer = true
  end

  class GrowsString
    def initialize(target, by)
      @target = target
      @by = by
    end

    def to_msgpack(pk)
      @target << @by          # a new, larger buffer: the old pointer is freed
      @target.replace("gone") if @by.empty?
      pk.write(7)
    end
  end

  def values_around(n)
    s = "é" * (n / 2) + "a" * (n % 2) # UTF-8, n bytes
    b = Random.new(n).bytes(n)          # binary
    a = ("a".."z").cycle.take(n).join.force_encoding("US-ASCII")
    [s, b, a, [s, 1, b], { "k" => s, "b" => b, s => 2 }, [b] * 40, { s => [a, b, { "x" => s }] },
     ["x" * 3000, s, "y".b * 5000, b], [s.to_sym, 1.5, 2**63, -2**63]]
  end

  # keep_refs: the reused packer keeps its list of referenced bodies (up to 64 entries) between packs
  it "keeps the reused packer's list of bodies between packs of any number of bodies, both ways" do
    expect(MPK._keep_refs?).to be(true)
    [true, false].each do |keep|
      MPK._keep_refs = keep
      [1, 3, 16, 17, 64, 65, 200, 2, 0, 70, 1].each do |n|
        v = Array.new(n) { |i| (i.even? ? "s" : "b".b) * (256 + i) } + [n]
        expect(MPK.pack(v)).to eq(MessagePack.pack(v))
        h = { "a" => "x" * 300, "n" => n, "b" => "y".b * (300 + n) }
        expect(MPK.pack(h)).to eq(MessagePack.pack(h))
      end
      # a pack that raises after referencing bodies, then packs that reuse the kept list
      expect { MPK.pack(["z" * 5000, "w" * 400, Object.new]) }.to raise_error(MPK::UnsupportedTypeError)
      GC.start
      GC.compact
      3.times { |i| expect(MPK.pack(["q" * (300 + i), "r" * 300])).to eq(MessagePack.pack(["q" * (300 + i), "r" * 300])) }
    ensure
      MPK._keep_refs = true
    end
  end

  it "is on by default, with warm_spill, prefault_result and reuse_packer" do
    expect([MPK._body_refs?, MPK._warm_spill?, MPK._prefault?, MPK._reuse_packer?]).to eq([true, true, true, true])
  end

  it "never reuses a packer a callback was handed, nor one whose pack raised" do
    each_setting do
      KeepsPacker.kept = nil
      expect(MPK.pack([1, KeepsPacker.new("in"), "x" * 300])).to eq(MessagePack.pack([1, "in", "x" * 300]))
      kept = KeepsPacker.kept
      20.times { |i| expect(MPK.pack(["y" * (i * 500), { "k" => i }])).to eq(MessagePack.pack(["y" * (i * 500), { "k" => i }])) }
      expect(kept.to_s).to eq("")
      kept.write(5)
      expect(MPK.pack([6])).to eq("\x91\x06".b)
      expect(kept.to_s).to eq("\x05".b)
      expect { MPK.pack(["z" * 5000, Object.new]) }.to raise_error(MPK::UnsupportedTypeError)
      expect(MPK.pack({ "a" => 1 })).to eq(MessagePack.pack({ "a" => 1 }))
      expect(ObjectSpace.each_object(MPK::Packer).count { |pk| pk.equal?(kept) }).to eq(1)
    end
  end

  it "gives every large output its exact bytes with each trick on and off" do
    small = Array.new(5000) { |i| [i, "v#{i}", i * 0.5] }
    values = [small, ["a" * 70_000, small, "b".b * 100_000], Array.new(40) { |i| "é" * (i * 100) },
              { "k" => small, "bin" => Random.new(3).bytes(300_000) }, "z" * 2_000_000, ["y" * 5000]]
    each_setting do
      values.each do |v|
        out = MPK.pack(v)
        expect(out).to eq(MessagePack.pack(v))
        expect(out.encoding).to eq(Encoding::BINARY)
        expect(out.bytesize).to eq(MessagePack.pack(v).bytesize)
      end
    end
  end

  class PacksInside
    def initialize(inner) = @inner = inner
    def to_msgpack(pk) = pk.write(MPK.unpack(MPK.pack(@inner)))
  end

  it "gives a pack nested in a callback its own buffer, and recovers from a pack that raises" do
    f = MPK::Factory.new
    big = Array.new(3000) { |i| "n#{i}" }
    f.register_type(3, Range, packer: ->(r) { MPK.pack([big, r.first]) }) # a whole pack inside the outer one
    mf = MessagePack::Factory.new
    mf.register_type(3, Range, packer: ->(r) { MessagePack.pack([big, r.first]) })
    v = [Array.new(2000) { |i| i * 3 }, (7..8), "t" * 9000, (9..10), big]
    each_setting do
      expect(f.dump(v)).to eq(mf.dump(v))
      expect(MPK.pack([big, PacksInside.new(big), big])).to eq(MessagePack.pack([big, big, big]))
      3.times { expect { MPK.pack([big, "q" * 5000, Object.new]) }.to raise_error(MPK::UnsupportedTypeError) }
      expect { MPK.pack([big, 2**70]) }.to raise_error(RangeError)
      expect(MPK.pack([big, "q" * 5000])).to eq(MessagePack.pack([big, "q" * 5000]))
    end
  end

  it "packs large outputs in Ractors, each with its own kept buffer", :subprocess do
    out = IO.popen(["ruby", "-W0", *$LOAD_PATH.grep(/ruby\/(build\/)?lib\z/).flat_map { |d| ["-I", d] }, "-e", <<~RUBY], &:read)
      require "mpk"
      rs = 3.times.map do |k|
        Ractor.new(k) do |i|
          v = [Array.new(4000) { |j| "r\#{i}-\#{j}" }, "x" * (10_000 * (i + 1)), (1..5000).to_a]
          50.times.map { MPK.unpack(MPK.pack(v)) == v }.all?
        end
      end
      v = [Array.new(6000) { |j| "m\#{j}" }, "w" * 300_000]
      main = 50.times.map { MPK.unpack(MPK.pack(v)) == v }.all?
      p [main, *rs.map(&:take)]
    RUBY
    expect(out).to eq("[true, true, true, true]\n")
  end

  it "packs every length around the threshold the same, referenced or copied" do
    [0, 31, 32, 127, 128, 255, 256, 257, 1000, 4095, 4096, 4097, 65_535, 65_536, 70_000].each do |n|
      values_around(n).each do |v|
        want = MessagePack.pack(v)
        got = MPK.pack(v)
        expect(got).to eq(want)
        expect(got.encoding).to eq(Encoding::BINARY)
        expect(got).not_to be_frozen
        expect(with_body_refs(false) { MPK.pack(v) }).to eq(want)
      end
    end
  end

  it "packs long bodies after much buffered output (where it stops referencing) the same" do
    small = Array.new(3000) { |i| "s#{i}" }
    [[small, "L" * 5000, ("b" * 300).b, Array.new(3000, 1.5), "M" * 400],
     ["L" * 20_000, small, "M" * 300, small, ("n" * 70_000).b, small, "o" * 256],
     [{ "a" => "x" * 300 }] * 200 + [small] + [{ "b" => "y" * 1000 }] * 50].each do |v|
      expect(MPK.pack(v)).to eq(MessagePack.pack(v))
      expect(with_body_refs(false) { MPK.pack(v) }).to eq(MessagePack.pack(v))
    end
  end

  it "keeps a String's bytes as they were when a later callback changes it" do
    [300, 5000, 100_000].each do |n|
      s = "q" * n
      b = ("z" * n).b
      want = MessagePack.pack([s, b, 7, s.dup, 9])
      v = [s, b, GrowsString.new(s, "more" * 10_000), s.dup, 9]
      expect(MPK.pack(v)).to eq(want)
      expect(s.bytesize).to eq(n + 40_000)
      s2 = "q" * n
      expect(MPK.pack([s2, b, GrowsString.new(s2, ""), "q" * n, 9])).to eq(want)
      expect(s2).to eq("gone")
      # in a map, and with a registered type (whose proc is Ruby code too)
      s3 = "w" * n
      f = MPK::Factory.new
      f.register_type(1, Range, packer: ->(r) { s3 << "!" * 9000; "r" })
      mf = MessagePack::Factory.new
      mf.register_type(1, Range, packer: ->(_) { "r" })
      want = mf.dump({ "a" => "w" * n, "r" => (1..2), "c" => "w" * n + "!" * 9000 })
      expect(f.dump({ "a" => s3, "r" => (1..2), "c" => s3 })).to eq(want)
    end
  end

  it "references again after Ruby code ran, and survives GC.compact and GC.stress" do
    big = ["m" * 2000, "n".b * 3000]
    v = [big[0], GrowsString.new(+"t", "u"), big[1], big[0]]
    want = MessagePack.pack([big[0], 7, big[1], big[0]])
    expect(MPK.pack(v)).to eq(want)
    GC.compact if GC.respond_to?(:compact)
    GC.stress = true
    begin
      3.times { expect(MPK.pack([big, { "k" => big[1] }, big])).to eq(MessagePack.pack([big, { "k" => big[1] }, big])) }
    ensure
      GC.stress = false
    end
  end

  it "raises as before when a value after a referenced body has no MessagePack form" do
    expect { MPK.pack(["x" * 1000, Object.new]) }.to raise_error(MPK::UnsupportedTypeError)
    expect(MPK.pack(["x" * 1000])).to eq(MessagePack.pack(["x" * 1000]))
  end
end

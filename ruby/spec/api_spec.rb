require_relative "spec_helper"

RSpec.describe "MPK one-shot API" do
  it "packs the seed's example" do
    expect([0, true, false, nil].to_msgpack).to eq("\x94\x00\xc3\xc2\xc0".b)
    expect(MPK.pack([0, true, false, nil])).to eq("\x94\x00\xc3\xc2\xc0".b)
    expect(MPK.dump("a")).to eq("\xa1a".b)
  end

  it "round-trips the core types" do
    obj = { "int" => [0, 1, -1, 127, 128, -32, -33, 2**64 - 1, -2**63], "f" => [1.5, -0.0, Float::INFINITY],
            "s" => "héllo", "b" => "\x00\xff".b, "nested" => { "a" => [[], {}] }, "n" => nil, "t" => true }
    back = MPK.unpack(MPK.pack(obj))
    expect(back).to eq(obj)
    expect(back["s"].encoding).to eq(Encoding::UTF_8)
    expect(back["b"].encoding).to eq(Encoding::BINARY)
    expect(MPK.load(MPK.dump(obj))).to eq(obj)
  end

  it "packs a Symbol as its name and other encodings as UTF-8" do
    expect(MPK.pack(:abc)).to eq("\xa3abc".b)
    expect(MPK.pack("é".encode("ISO-8859-1"))).to eq("\xa2\xc3\xa9".b)
  end

  it "writes the shortest int forms" do
    expect(MPK.pack(255)).to eq("\xcc\xff".b)
    expect(MPK.pack(-129)).to eq("\xd1\xff\x7f".b)
    expect(MPK.pack(2**63)).to eq("\xcf\x80\x00\x00\x00\x00\x00\x00\x00".b)
  end

  it "refuses integers beyond 64 bits with RangeError" do
    expect { MPK.pack(2**64) }.to raise_error(RangeError)
    expect { MPK.pack(-2**63 - 1) }.to raise_error(RangeError)
  end

  it "refuses an unsupported object naming its class and path" do
    expect { MPK.pack([1, { "k" => Object.new }]) }.to raise_error(MPK::UnsupportedTypeError, /Object at \$\[1\]\["k"\]/) { |e|
      expect(e.kind).to eq(:unsupported_type)
    }
  end

  it "calls to_msgpack(packer) on other objects" do
    klass = Class.new { def to_msgpack(pk) = pk.write([1, 2]) }
    expect(MPK.unpack(MPK.pack({ "x" => klass.new }))).to eq({ "x" => [1, 2] })
  end

  it "freezes and deduplicates hash keys" do
    a, b = MPK.unpack(MPK.pack([{ "key" => 1 }, { "key" => 2 }]))
    expect(a.keys[0]).to be_frozen
    expect(a.keys[0]).to equal(b.keys[0])
  end

  it "symbolizes keys and freezes values on request" do
    v = MPK.unpack(MPK.pack({ "a" => ["x"] }), symbolize_keys: true, freeze: true)
    expect(v).to eq({ a: ["x"] })
    expect(v).to be_frozen
    expect(v[:a]).to be_frozen
    expect(v[:a][0]).to be_frozen
  end

  it "gives every String its own bytes (the input may change afterwards)" do
    input = MPK.pack(["x" * 1000, "y" * 10])
    long, short = MPK.unpack(input)
    input.replace("z" * input.bytesize)
    expect([long, short]).to eq(["x" * 1000, "y" * 10])
    long << "!" # ordinary, mutable Strings
    expect(long.size).to eq(1001)
  end

  describe "errors" do
    def error_of(bytes, **opts)
      MPK.unpack(bytes.b, **opts)
      nil
    rescue MPK::Error => e
      e
    end

    it "raises msgpack-ruby's classes with the spec's kind and offset" do
      cases = {
        "\x93\x01" => [MPK::TruncatedError, :truncated, 0],
        "\xc1" => [MPK::MalformedFormatError, :invalid_byte, 0],
        "\x01\x02" => [MPK::MalformedFormatError, :trailing_bytes, 1],
        "\x92\x01\xd6\xff\x00" => [MPK::TruncatedError, :truncated, 2],
        "\xd5\xff\x00\x00" => [MPK::MalformedFormatError, :invalid_timestamp, 0],
        "\xd4\x05\x00" => [MPK::UnknownExtTypeError, :unknown_ext_type, 0],
      }
      cases.each do |hex, (klass, kind, offset)|
        e = error_of(hex)
        expect(e).to be_a(klass), "#{hex.unpack1('H*')}: #{e.inspect}"
        expect([e.kind, e.offset]).to eq([kind, offset]), hex.unpack1("H*")
        expect(e.message).to end_with("at byte #{offset}")
      end
      expect(error_of("\x93\x01")).to be_a(EOFError)
    end

    it "applies the depth and length limits with the core's defaults" do
      deep = ("\x91" * 1024) + "\x00"
      expect(MPK.unpack(deep.b)).to be_a(Array)
      e = error_of(("\x91" * 1025) + "\x00")
      expect([e.class, e.kind, e.offset]).to eq([MPK::StackError, :depth_limit, 1024])
      e = error_of("\xa3abc", limits: { str: 2 })
      expect([e.class, e.kind, e.offset]).to eq([MPK::LengthLimitError, :length_limit, 0])
      e = error_of("\x92\x00\x00", limits: { array: 1 })
      expect([e.kind, e.offset]).to eq([:length_limit, 0])
      expect(MPK::DEFAULT_DEPTH).to eq(1024)
      expect(MPK::DEFAULT_LENGTH).to eq(2**32 - 1)
    end

    it "checks strict UTF-8 only when asked" do
      expect(MPK.unpack("\xa1\xff".b).bytes).to eq([0xff])
      e = error_of("\xa1\xff", strict_utf8: true)
      expect([e.kind, e.offset]).to eq([:invalid_utf8, 0])
    end

    it "refuses to pack nesting deeper than 1024" do
      v = []
      1100.times { v = [v] }
      expect { MPK.pack(v) }.to raise_error(MPK::StackError)
      cyclic = []
      cyclic << cyclic
      expect { MPK.pack(cyclic) }.to raise_error(MPK::StackError)
    end
  end
end

RSpec.describe "Ractors" do
  it "packs and unpacks inside a non-main Ractor (the extension is declared Ractor-safe)", :subprocess do
    out = IO.popen(["ruby", "-W0", *$LOAD_PATH.grep(/ruby\/(build\/)?lib\z/).flat_map { |d| ["-I", d] }, "-e", <<~RUBY], &:read)
      require "mpk"
      rs = 2.times.map do |i|
        Ractor.new(i) do |k|
          pk = MPK::Packer.new
          pk.write([k, "a", { "b" => 2.5 }])
          u = MPK::Unpacker.new
          u.feed(pk.to_s)
          [u.read, MPK.unpack(MPK.pack([k]))]
        end
      end
      p rs.map(&:take)
    RUBY
    expect(out).to eq("[[[0, \"a\", {\"b\"=>2.5}], [0]], [[1, \"a\", {\"b\"=>2.5}], [1]]]\n")
  end
end

RSpec.describe "map keys" do
  it "come back right through the per-decode key cache, colliding slots and encodings included" do
    keys = (1..300).map { |i| "k#{i}" } + ["", "x" * 33, "é"]
    records = Array.new(5) { keys.to_h { |k| [k, k.size] } }
    bin_keyed = { "é".b => 1, "é" => 2 } # same bytes, bin then str: two keys
    back = MPK.unpack(MPK.pack([records, bin_keyed]))
    expect(back).to eq([records, bin_keyed])
    expect(back[1].keys.map(&:encoding)).to eq([Encoding::BINARY, Encoding::UTF_8])
    sym = MPK.unpack(MPK.pack(records), symbolize_keys: true)
    expect(sym[4].keys).to eq(keys.map(&:to_sym))
  end

  # key_cache (ext/mpk/rb_mpk.c): the cache lasts from one decode to the next (one per Ractor);
  # MPK._key_cache = false gives every decode a fresh one (the fallback)
  [true, false].each do |lasting|
    context(lasting ? "with the lasting key cache" : "with a fresh key cache per decode") do
      around do |ex|
        MPK._key_cache = lasting
        ex.run
      ensure
        MPK._key_cache = true
      end

      it "gives each decode the key form its options ask for, whatever the one before asked" do
        bytes = MPK.pack({ "id" => 1, "name" => "x", "é" => 2 })
        [false, true, true, false, true, false].each do |sym|
          h = MPK.unpack(bytes, symbolize_keys: sym)
          expect(h.keys).to eq(sym ? %i[id name é] : %w[id name é])
          expect(h.keys.map(&:frozen?)).to all(be(true))
          expect(h.keys.map(&:encoding)).to all(eq(Encoding::UTF_8)) unless sym
        end
      end

      it "keeps str and bin keys of the same bytes apart across decodes" do
        str_keyed = MPK.pack({ "key" => 1 })
        bin_keyed = MPK.pack({ "key".b => 1 })
        3.times do
          expect(MPK.unpack(bin_keyed).keys.first.encoding).to eq(Encoding::BINARY)
          expect(MPK.unpack(str_keyed).keys.first.encoding).to eq(Encoding::UTF_8)
        end
      end

      it "hands out the interned key itself, valid after GC.compact and under GC.stress" do
        bytes = MPK.pack([{ "alpha" => 1, "beta" => [{ "alpha" => 2 }] }] * 3)
        first = MPK.unpack(bytes)
        expect(first[0].keys.first).to equal(-"alpha")
        GC.compact if GC.respond_to?(:compact)
        GC.stress = true
        begin
          again = MPK.unpack(bytes)
        ensure
          GC.stress = false
        end
        expect(again).to eq(first)
        expect(again[2]["beta"][0].keys.first).to equal(-"alpha")
        # many more keys than slots, from one decode to the next
        big = Array.new(3) { |j| (1..700).to_h { |i| ["key#{(i * 7 + j) % 900}", i] } }
        big.each { |h| expect(MPK.unpack(MPK.pack(h))).to eq(h) }
      end
    end
  end

  it "is lasting by default, and a Ractor has its own", :subprocess do
    expect(MPK._key_cache?).to be(true)
    out = IO.popen(["ruby", "-W0", *$LOAD_PATH.grep(/ruby\/(build\/)?lib\z/).flat_map { |d| ["-I", d] }, "-e", <<~RUBY], &:read)
      require "mpk"
      bytes = MPK.pack((1..300).to_h { |i| ["k\#{i}", i] })
      rs = 2.times.map do |i|
        Ractor.new(bytes, i) do |b, k|
          200.times.map { |j| MPK.unpack(b, symbolize_keys: (j + k).odd?) }.map { |h| [h.size, h.keys[7], h[h.keys[299]]] }.uniq
        end
      end
      main = 200.times.map { MPK.unpack(bytes) }.map { |h| [h.size, h.keys[7]] }.uniq
      p [main, *rs.map(&:take)]
    RUBY
    expect(out).to eq(%([[[300, "k8"]], [[300, "k8", 300], [300, :k8, 300]], [[300, :k8, 300], [300, "k8", 300]]]\n))
  end
end

RSpec.describe "packing errors" do
  it "name the whole path, however deep" do
    v = Object.new
    300.times { |i| v = { "k#{i}" => [v] } }
    expect { MPK.pack(v) }.to raise_error(MPK::UnsupportedTypeError) { |e|
      expect(e.message).to start_with('no MessagePack form for Object at $["k299"][0]["k298"][0]')
      expect(e.message).to end_with('["k0"][0]')
      expect(e.offset).to be_nil
    }
  end

  it "start the path at $, the value given to pack, and leave it out for the value itself" do
    expect { MPK.pack({ "a" => [1, Object.new] }) }.to raise_error(MPK::UnsupportedTypeError,
                                                                    'no MessagePack form for Object at $["a"][1]')
    expect { MPK.pack(Object.new) }.to raise_error(MPK::UnsupportedTypeError, "no MessagePack form for Object")
  end
end

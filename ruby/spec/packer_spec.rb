require_relative "spec_helper"
require "stringio"

RSpec.describe MPK::Packer do
  it "keeps its own output buffer: write, headers, ext, float32, to_s, size, empty?, reset" do
    pk = MPK::Packer.new
    expect(pk).to be_empty
    pk.write_array_header(3).write(1).write_nil.write_map_header(1).write("k").write_float32(1.5)
    pk.write_ext(5, "ab")
    expect(pk.to_s).to eq("\x93\x01\xc0\x81\xa1k\xca\x3f\xc0\x00\x00\xd5\x05ab".b)
    expect(pk.size).to eq(15)
    expect(pk).not_to be_empty
    expect(pk.to_a).to eq([pk.to_s])
    pk.reset
    expect(pk).to be_empty
    expect(pk.write(true).to_s).to eq("\xc3".b)
  end

  it "grows its buffer for large output" do
    pk = MPK::Packer.new
    big = "x" * 100_000
    10.times { pk.write(big) }
    expect(pk.size).to eq(10 * (5 + 100_000))
    u = MPK::Unpacker.new
    u.feed(pk.to_s)
    expect(u.each.to_a).to eq([big] * 10)
  end

  it "writes to an IO on flush and write_to" do
    io = StringIO.new("".b)
    pk = MPK::Packer.new(io)
    pk.write([1, 2]).write("a")
    pk.flush
    expect(io.string).to eq("\x92\x01\x02\xa1a".b)
    expect(pk).to be_empty
    out = StringIO.new("".b)
    MPK::Packer.new.write(7).write_to(out)
    expect(out.string).to eq("\x07".b)
    sink = StringIO.new("".b)
    MPK.pack({ "a" => 1 }, sink)
    expect(sink.string).to eq("\x81\xa1a\x01".b)
  end

  it "refuses ext types outside -128..127 and header counts beyond 2^32-1" do
    expect { MPK::Packer.new.write_ext(128, "") }.to raise_error(RangeError)
    expect { MPK::Packer.new.write_array_header(2**32) }.to raise_error(RangeError)
    expect { MPK::Packer.new.write_map_header(-1) }.to raise_error(RangeError)
  end

  it "packs ExtensionValue and Timestamp in their shortest forms" do
    expect(MPK.pack(MPK::ExtensionValue.new(1, "abcd"))).to eq("\xd6\x01abcd".b)
    expect(MPK.pack(MPK::Timestamp.new(1, 0))).to eq("\xd6\xff\x00\x00\x00\x01".b)
    expect(MPK.pack(MPK::Timestamp.new(-1, 5)).bytesize).to eq(15)
    expect { MPK.pack(MPK::Timestamp.new(0, 1_000_000_000)) }.to raise_error(MPK::InvalidTimestampError) { |e|
      expect(e.kind).to eq(:invalid_timestamp)
    }
    expect { MPK.pack(MPK::Timestamp.new(2**63, 0)) }.to raise_error(RangeError)
  end

  it "register_type packs a class (and its subclasses) as an ext type" do
    point = Struct.new(:x, :y)
    sub = Class.new(point)
    pk = MPK::Packer.new
    pk.register_type(10, point) { |p| [p.x, p.y].pack("CC") }
    pk.write([point.new(1, 2), sub.new(3, 4)])
    expect(pk.to_s).to eq("\x92\xd5\x0a\x01\x02\xd5\x0a\x03\x04".b)
    expect(pk.type_registered?(point)).to be(true)
    expect(pk.registered_types.map { |t| t[:type] }).to eq([10])
  end

  it "keeps the values written before an error, none of the failed one; reset clears them" do
    pk = MPK::Packer.new
    pk.write(0)
    expect { pk.write([1, Object.new]) }.to raise_error(MPK::UnsupportedTypeError, /Object at \$\[1\]/)
    expect(pk.to_s).to eq("\x00".b)
    expect(pk.reset).to be_empty
  end

  it "restores its state when a to_msgpack callback raises" do
    bad = Class.new { def to_msgpack(_pk) = raise(ArgumentError, "no") }
    pk = MPK::Packer.new
    expect { pk.write([bad.new]) }.to raise_error(ArgumentError)
    v = []
    1000.times { v = [v] }
    pk.reset.write(v) # the depth count starts from zero again
    expect(MPK.unpack(pk.to_s)).to eq(v)
  end
end

RSpec.describe "MPK::Packer typed writes" do
  it "write_int, write_string, write_bin, write_symbol, write_array, write_hash, write_extension" do
    pk = MPK::Packer.new
    pk.write_int(-1).write_string("é").write_bin("é").write_symbol(:s).write_array([1]).write_hash({ 1 => 2 })
    pk.write_extension(MPK::ExtensionValue.new(1, "a"))
    expect(pk.to_s).to eq("\xff\xa2\xc3\xa9\xc4\x02\xc3\xa9\xa1s\x91\x01\x81\x01\x02\xd4\x01a".b)
    expect { pk.write_int("1") }.to raise_error(ArgumentError)
  end
end

RSpec.describe "MPK::Packer fast paths and their general path" do
  it "writes the same bytes for values that take the inline paths and those that do not" do
    heap_float = 1e300 * 10 # not a flonum: a heap Float, general path
    arr = [1, -1, 2**62 - 1, 0.5, heap_float, Float::INFINITY, -0.0]
    expect(MPK.pack(arr)).to eq(MessagePack.pack(arr)) if defined?(MessagePack)
    expect(MPK.unpack(MPK.pack(arr))).to eq(arr)
    expect(MPK.pack([1e-320])).to eq("\x91\xcb".b + [1e-320].pack("G"))
    keys = { "str" => 1, :sym => 2, 3 => 3, "bin".b => 4, "é".encode("ISO-8859-1") => 5 }
    expect(MPK.pack(keys)).to eq("\x85\xa3str\x01\xa3sym\x02\x03\x03\xc4\x03bin\x04\xa2\xc3\xa9\x05".b)
  end
end

RSpec.describe "MPK::Packer with an IO" do
  it "hands the buffer to the IO once 32 KiB are buffered, and the rest on flush" do
    io = StringIO.new("".b)
    pk = MPK::Packer.new(io)
    pk.write("a" * 10)
    expect(io.string).to eq("")
    pk.write("b" * 40_000)
    expect(io.string.bytesize).to eq(11 + 40_003)
    expect(pk).to be_empty
    pk.write(1).flush
    expect(MPK::Unpacker.new(StringIO.new(io.string)).each.to_a).to eq(["a" * 10, "b" * 40_000, 1])
  end
end

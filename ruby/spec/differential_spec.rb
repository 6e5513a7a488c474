require_relative "spec_helper"

# Differential tests against Debian's msgpack-ruby (1.4.2): seeded random values give the same
# bytes from both packers and the same values back from both unpackers, and the same streams fed in
# the same random pieces give the same values at the same moments. msgpack-ruby is loaded only when
# these examples start, so the specs before them see mpk's own #to_msgpack.
module RandomValues
  module_function

  INT_EDGES = [0, 1, 127, 128, 255, 256, 65_535, 65_536, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1,
               -1, -32, -33, -128, -129, -32_768, -32_769, -2**31, -2**31 - 1, -2**63].freeze

  def int(r)
    case r.rand(4)
    when 0 then INT_EDGES.sample(random: r)
    when 1 then r.rand(-200..200)
    when 2 then r.rand(-2**63..2**64 - 1)
    else r.rand(-2**31..2**32)
    end
  end

  def str(r)
    n = [0, 1, 5, 31, 32, 255, 256, 300, 65_536].sample(random: r)
    n = r.rand(0..n)
    chars = ["a", "z", "é", "中", "😀", " ", "\u0000"]
    s = Array.new(n) { chars.sample(random: r) }.join
    s.byteslice(0, n).scrub("").force_encoding(Encoding::UTF_8)
  end

  def float(r)
    [0.0, -0.0, 1.5, -2.25, Float::INFINITY, -Float::INFINITY, 1e300, 5e-324, r.rand * 1e6 - 5e5].sample(random: r)
  end

  def value(r, depth = 0)
    k = depth > 3 ? r.rand(7) : r.rand(10)
    case k
    when 0 then nil
    when 1 then r.rand(2).zero?
    when 2, 3 then int(r)
    when 4 then float(r)
    when 5 then str(r)
    when 6 then r.bytes(r.rand(0..300))
    when 7, 8 then Array.new(r.rand(0..6)) { value(r, depth + 1) }
    else
      h = {}
      r.rand(0..5).times { h[r.rand(2).zero? ? str(r) : int(r)] = value(r, depth + 1) }
      h
    end
  end

  # NaN-free structural equality that tells -0.0 from 0.0 and a String's encoding.
  def same?(a, b)
    return false unless a.class == b.class
    case a
    when Float then a == b && (a.zero? ? 1.0 / a == 1.0 / b : true)
    when String then a == b && a.encoding == b.encoding
    when Array then a.size == b.size && a.zip(b).all? { |x, y| same?(x, y) }
    when Hash then a.size == b.size && a.keys.zip(b.keys).all? { |x, y| same?(x, y) } && a.values.zip(b.values).all? { |x, y| same?(x, y) }
    else a == b
    end
  end
end

RSpec.describe "differential vs msgpack-ruby" do
  before(:all) { require "msgpack" }

  it "uses Debian's msgpack-ruby 1.4" do
    expect(MessagePack::VERSION).to start_with("1.4")
  end

  it "random values: same bytes, same values back (2000 values, seeded)" do
    r = Random.new(1313)
    2000.times do |i|
      v = RandomValues.value(r)
      mine = MPK.pack(v)
      theirs = MessagePack.pack(v)
      expect(mine).to eq(theirs), "value #{i}: #{v.inspect[0, 200]}"
      back = MPK.unpack(theirs)
      expect(RandomValues.same?(back, MessagePack.unpack(mine))).to be(true), "value #{i}"
      expect(RandomValues.same?(back, v)).to be(true), "value #{i}"
    end
  end

  it "random streams fed in random pieces: the same values at the same moments" do
    r = Random.new(77)
    50.times do
      values = Array.new(r.rand(1..30)) { RandomValues.value(r) }
      bytes = values.map { |v| MessagePack.pack(v) }.join
      mine = MPK::Unpacker.new
      theirs = MessagePack::Unpacker.new
      pos = 0
      while pos < bytes.bytesize
        n = [1, 2, 3, 7, 64, 1000].sample(random: r)
        piece = bytes.byteslice(pos, n)
        pos += n
        a = mine.feed_each(piece).to_a
        b = theirs.feed_each(piece).to_a
        expect(a.size).to eq(b.size)
        expect(RandomValues.same?(a, b)).to be(true)
      end
    end
  end

  it "scripted Packer calls give the same bytes" do
    r = Random.new(5)
    200.times do
      a = MPK::Packer.new
      b = MessagePack::Packer.new
      r.rand(1..12).times do
        case r.rand(7)
        when 0 then n = r.rand(0..70_000); a.write_array_header(n); b.write_array_header(n)
        when 1 then n = r.rand(0..70_000); a.write_map_header(n); b.write_map_header(n)
        when 2 then a.write_nil; b.write_nil
        when 3 then f = RandomValues.float(r); a.write_float32(f); b.write_float32(f)
        when 4 then t = r.rand(-128..127); p = r.bytes(r.rand(0..20)); a.write_ext(t, p); b.write_ext(t, p)
        else v = RandomValues.value(r); a.write(v); b.write(v)
        end
      end
      expect(a.to_s).to eq(b.to_s)
      expect(a.size).to eq(b.size)
    end
  end

  it "scripted Unpacker calls (headers, skip, skip_nil, read) give the same results" do
    r = Random.new(9)
    100.times do
      values = Array.new(r.rand(1..10)) { [nil, [1, [2]], { "a" => nil }, "s", 3].sample(random: r) }
      bytes = values.map { |v| MessagePack.pack(v) }.join
      a = MPK::Unpacker.new
      b = MessagePack::Unpacker.new
      a.feed(bytes)
      b.feed(bytes)
      20.times do
        op = %i[read skip skip_nil read_array_header read_map_header].sample(random: r)
        ra = begin
          [:ok, a.public_send(op)]
        rescue EOFError
          [:eof]
        rescue MPK::UnexpectedTypeError
          [:type]
        end
        rb = begin
          [:ok, b.public_send(op)]
        rescue EOFError
          [:eof]
        rescue MessagePack::UnexpectedTypeError
          [:type]
        end
        expect(ra).to eq(rb), "#{op}: #{ra.inspect} vs #{rb.inspect} in #{values.inspect}"
      end
    end
  end
end

require_relative "spec_helper"
require "stringio"

RSpec.describe MPK::Unpacker do
  let(:bytes) { MPK.pack([1, "two", { "three" => 3.0 }]) + MPK.pack(nil) + MPK.pack("end") }

  it "feeds, then each yields every complete value and keeps the rest" do
    u = MPK::Unpacker.new
    u.feed(bytes[0, 5])
    expect(u.each.to_a).to eq([])
    u.feed(bytes[5..])
    expect(u.each.to_a).to eq([[1, "two", { "three" => 3.0 }], nil, "end"])
    expect(u.buffered_size).to eq(0)
  end

  it "feed_each, read and EOFError when the fed bytes hold no complete value" do
    u = MPK::Unpacker.new
    out = []
    u.feed_each(bytes[0, 3]) { |v| out << v }
    expect(out).to eq([])
    expect { u.read }.to raise_error(EOFError)
    u.feed(bytes[3..])
    expect(u.read).to eq([1, "two", { "three" => 3.0 }])
    expect(u.read).to be_nil
    expect(u.read).to eq("end")
    expect { u.read }.to raise_error(EOFError)
  end

  it "skip and skip_nil" do
    u = MPK::Unpacker.new
    u.feed(bytes)
    expect(u.skip_nil).to be(false)
    u.skip
    expect(u.skip_nil).to be(true) # looks only, as msgpack-ruby 1.4 does
    expect(u.skip_nil).to be(true)
    expect(u.read).to be_nil
    expect(u.read).to eq("end")
    expect { u.skip_nil }.to raise_error(EOFError)
  end

  it "read_array_header and read_map_header stream containers" do
    u = MPK::Unpacker.new
    u.feed(MPK.pack([{ "a" => 1 }, 2]))
    expect(u.read_array_header).to eq(2)
    expect(u.read_map_header).to eq(1)
    expect([u.read, u.read, u.read]).to eq(["a", 1, 2])
    u.feed(MPK.pack(5))
    expect { u.read_array_header }.to raise_error(MPK::UnexpectedTypeError) { |e| expect([e.kind, e.offset]).to eq([:type, 6]) }
    expect(u.read).to eq(5)
    u.feed("\xdd\x00".b)
    expect { u.read_array_header }.to raise_error(EOFError)
    u.feed("\x00\x00\x02\x01\x02".b)
    expect(u.read_array_header).to eq(2)
    expect(u.each.to_a).to eq([1, 2])
  end

  it "a header read between values keeps the stream's offsets" do
    u = MPK::Unpacker.new
    u.feed("\x92\x01\xc1".b)
    expect(u.read_array_header).to eq(2)
    expect(u.read).to eq(1)
    expect { u.read }.to raise_error(MPK::MalformedFormatError) { |e| expect([e.kind, e.offset]).to eq([:invalid_byte, 2]) }
  end

  it "reports a bad byte as soon as it arrives, after the values before it, and stays failed" do
    u = MPK::Unpacker.new
    got = []
    u.feed("\x01\x02".b)
    u.each { |v| got << v }
    u.feed("\x91\xc1".b)
    expect { u.each { |v| got << v } }.to raise_error(MPK::MalformedFormatError) { |e|
      expect([e.kind, e.offset]).to eq([:invalid_byte, 3])
    }
    expect(got).to eq([1, 2])
    expect { u.read }.to raise_error(MPK::MalformedFormatError)
    u.reset
    u.feed("\x07".b)
    expect(u.read).to eq(7)
    u.feed("\xc1".b) # offsets count from the reset
    expect { u.read }.to raise_error(MPK::MalformedFormatError) { |e| expect(e.offset).to eq(1) }
  end

  it "reads from an IO, whatever the read sizes; a value cut by EOF is truncated at its offset" do
    io = StringIO.new(bytes)
    u = MPK::Unpacker.new(io, read_size: 2)
    expect(u.each.to_a).to eq([[1, "two", { "three" => 3.0 }], nil, "end"])
    cut = MPK::Unpacker.new(StringIO.new(bytes[0..-2]), read_size: 1)
    expect(cut.read).to eq([1, "two", { "three" => 3.0 }])
    expect(cut.read).to be_nil
    expect { cut.read }.to raise_error(MPK::TruncatedError) { |e| expect(e.offset).to eq(bytes.bytesize - 4) }
  end

  it "symbolize_keys, freeze, allow_unknown_ext" do
    u = MPK::Unpacker.new(symbolize_keys: true, freeze: true)
    expect(u.symbolize_keys?).to be(true)
    u.feed(MPK.pack({ "a" => ["b"] }))
    v = u.read
    expect(v).to eq({ a: ["b"] })
    expect(v[:a][0]).to be_frozen
    u = MPK::Unpacker.new
    u.feed("\xd4\x05\x00".b)
    expect { u.read }.to raise_error(MPK::UnknownExtTypeError)
    u = MPK::Unpacker.new(allow_unknown_ext: true)
    u.feed("\xd4\x05\x00".b)
    expect(u.read).to eq(MPK::ExtensionValue.new(5, "\x00".b))
  end

  it "register_type with a block or a class method" do
    klass = Class.new do
      attr_reader :v
      def initialize(v) = @v = v
      def self.from_ext(s) = new(s)
    end
    u = MPK::Unpacker.new
    u.register_type(3) { |payload| payload.upcase }
    u.register_type(4, klass, :from_ext)
    u.feed("\xd4\x03a\xd4\x04b".b)
    expect(u.read).to eq("A")
    expect(u.read.v).to eq("b")
    expect(u.type_registered?(3)).to be(true)
  end

  it "applies limits to streamed values" do
    u = MPK::Unpacker.new(limits: { str: 3, depth: 2 })
    u.feed("\xa4abcd".b)
    expect { u.read }.to raise_error(MPK::LengthLimitError) { |e| expect(e.offset).to eq(0) }
    u = MPK::Unpacker.new(limits: { depth: 2 })
    u.feed("\x91\x91\x91".b)
    expect { u.read }.to raise_error(MPK::StackError) { |e| expect(e.offset).to eq(2) }
  end

  it "refuses to be fed from inside its own ext callback" do
    u = MPK::Unpacker.new
    u.register_type(1) { |_| u.feed("\x00") }
    u.feed("\xd4\x01\x00".b)
    expect { u.read }.to raise_error(RuntimeError, /inside its own/)
    u.feed("\x05".b) # usable again afterwards
    expect(u.read).to eq(5)
  end
end

RSpec.describe "MPK::Unpacker fed from inside each" do
  it "loses and repeats nothing when a feed in the block moves the buffer" do
    u = MPK::Unpacker.new
    first = MPK.pack([1, "a"]) + MPK.pack(2) + MPK.pack(3)
    later = MPK.pack("x" * 100_000) + MPK.pack(4) # large enough to move the buffer
    got = []
    fed = false
    u.feed(first)
    u.each do |v|
      got << v
      unless fed
        u.feed(later)
        fed = true
      end
    end
    expect(got).to eq([[1, "a"], 2, 3, "x" * 100_000, 4])
  end
end

RSpec.describe "MPK::Unpacker under random feeds, reads and header calls" do
  it "delivers every value once, in order (seeded)" do
    r = Random.new(11)
    100.times do
      values = Array.new(r.rand(1..40)) { [nil, "s" * r.rand(0..600), [1, [2, "x" * r.rand(0..300)]], { "k" => 1.5 }, -7].sample(random: r) }
      bytes = values.map { |v| MPK.pack(v) }.join
      pieces = []
      pos = 0
      while pos < bytes.bytesize
        n = [1, 3, 50, 700, 5000].sample(random: r)
        pieces << bytes.byteslice(pos, n)
        pos += n
      end
      u = MPK::Unpacker.new
      got = []
      feed_more = -> { u.feed(pieces.shift) unless pieces.empty? }
      until pieces.empty? && got.size == values.size
        case r.rand(4)
        when 0 then feed_more.call
        when 1 then u.each { |v| got << v; feed_more.call if r.rand(3).zero? }
        when 2
          begin
            got << u.read
          rescue EOFError
            feed_more.call
          end
        else
          begin
            got << nil if u.skip_nil && u.read.nil?
          rescue EOFError
            feed_more.call
          end
        end
      end
      expect(got).to eq(values)
      expect(u.buffered_size).to eq(0)
    end
  end
end

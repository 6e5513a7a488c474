require_relative "spec_helper"

Point3 = Struct.new(:x, :y, :z) do
  def to_msgpack_ext = [x, y, z].pack("l>3")
  def self.from_msgpack_ext(s) = new(*s.unpack("l>3"))
end

RSpec.describe MPK::Factory do
  it "registers a type with the default to_msgpack_ext / from_msgpack_ext" do
    f = MPK::Factory.new
    f.register_type(1, Point3)
    bytes = f.dump([Point3.new(1, -2, 3)])
    expect(bytes).to eq("\x91\xc7\x0c\x01".b + [1, -2, 3].pack("l>3"))
    expect(f.load(bytes)).to eq([Point3.new(1, -2, 3)])
    expect(f.registered_types.map { |t| t[:type] }).to eq([1, 1])
    expect(f.type_registered?(Point3)).to be(true)
  end

  it "packer:/unpacker: procs, and packer/unpacker objects that share them" do
    f = MPK::Factory.new
    f.register_type(2, Symbol, packer: ->(s) { s.to_s }, unpacker: ->(s) { s.to_sym })
    pk = f.packer
    pk.write(%i[a b])
    u = f.unpacker
    u.feed(pk.to_s)
    expect(u.read).to eq(%i[a b])
    expect(MPK.pack(:a)).to eq("\xa1a".b) # the default factory is untouched
  end

  it "recursive: true hands the procs a packer and an unpacker" do
    line = Struct.new(:from, :to)
    f = MPK::Factory.new
    f.register_type(1, Point3)
    f.register_type(2, line,
                    packer: ->(l, pk) { pk.write(l.from); pk.write(l.to) },
                    unpacker: ->(u) { line.new(u.read, u.read) },
                    recursive: true)
    v = line.new(Point3.new(1, 2, 3), Point3.new(4, 5, 6))
    expect(f.load(f.dump(v))).to eq(v)
  end

  it "a recursive packer that never ends hits the depth limit" do
    loop_class = Class.new
    f = MPK::Factory.new
    f.register_type(1, loop_class, packer: ->(o, pk) { pk.write(o) }, unpacker: ->(u) { u.read }, recursive: true)
    expect { f.dump(loop_class.new) }.to raise_error(MPK::StackError)
  end

  it "a frozen factory refuses registration; pools pack and unpack" do
    f = MPK::Factory.new
    f.register_type(1, Point3)
    f.freeze
    expect { f.register_type(2, Point3) }.to raise_error(FrozenError)
    pool = f.pool(2)
    expect(pool.load(pool.dump(Point3.new(7, 8, 9)))).to eq(Point3.new(7, 8, 9))
  end

  it "opt-in Time as the timestamp type" do
    f = MPK::Factory.new
    MPK::Time.register(f)
    t = Time.at(1_700_000_000, 123_456_789, :nanosecond)
    bytes = f.dump(t)
    expect(bytes.bytesize).to eq(10) # timestamp 64
    expect(f.load(bytes)).to eq(t)
    expect(MPK.unpack(bytes)).to eq(MPK::Timestamp.new(1_700_000_000, 123_456_789))
    expect { MPK.pack(t) }.to raise_error(MPK::UnsupportedTypeError, /Time/)
  end

  it "MPK.pack / unpack use DefaultFactory's registrations" do
    klass = Class.new
    begin
      MPK::DefaultFactory.register_type(33, klass, packer: ->(_) { "z" }, unpacker: ->(s) { s * 2 })
      expect(MPK.pack([klass.new])).to eq("\x91\xd4\x21z".b)
      expect(MPK.unpack("\xd4\x21z".b)).to eq("zz")
    ensure
      MPK::DefaultFactory.instance_variable_get(:@packer_types).clear
      MPK::DefaultFactory.instance_variable_get(:@unpacker_types).clear
      MPK::DefaultFactory.instance_variable_set(:@prototype, nil)
    end
  end
end

RSpec.describe "require 'mpk/msgpack'" do
  it "defines MessagePack as MPK when the msgpack gem is not loaded, and shadows a later require", :subprocess do
    out = IO.popen(["ruby", *$LOAD_PATH.grep(/ruby\/(build\/)?lib\z/).flat_map { |d| ["-I", d] }, "-e", <<~RUBY], &:read)
      require "mpk/msgpack"
      p MessagePack.equal?(MPK)
      p require("msgpack")
      p MessagePack.unpack([1, "a"].to_msgpack)
      p MessagePack::Unpacker.new.feed("\\x01").read
    RUBY
    expect(out).to eq("true\nfalse\n[1, \"a\"]\n1\n")
  end

  it "leaves a loaded msgpack gem alone", :subprocess do
    out = IO.popen(["ruby", *$LOAD_PATH.grep(/ruby\/(build\/)?lib\z/).flat_map { |d| ["-I", d] }, "-e", <<~RUBY], err: [:child, :out], &:read)
      require "msgpack"
      require "mpk/msgpack"
      p MessagePack.equal?(MPK)
    RUBY
    expect(out).to include("leaving it alone")
    expect(out).to end_with("false\n")
  end
end

RSpec.describe "oversized_integer_extension" do
  it "packs only the Integers beyond 64 bits as the ext type" do
    f = MPK::Factory.new
    f.register_type(0x01, Integer, packer: ->(i) { i.to_s }, unpacker: ->(s) { s.to_i }, oversized_integer_extension: true)
    v = [1, 2**64 - 1, 2**64, -2**63, -2**63 - 1, 10**40]
    bytes = f.dump(v)
    expect(bytes.byteslice(0, 2)).to eq("\x96\x01".b)
    expect(f.load(bytes)).to eq(v)
    expect { MPK.pack(2**64) }.to raise_error(RangeError)
    expect { f.register_type(2, String, packer: :to_s, unpacker: :to_s, oversized_integer_extension: true) }.to raise_error(ArgumentError)
  end
end

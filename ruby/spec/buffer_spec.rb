require_relative "spec_helper"
require "stringio"

RSpec.describe MPK::Buffer do
  it "appends, reads, skips and cuts across chunks" do
    b = MPK::Buffer.new
    b << "abc" << ("x" * 300) << "de"
    expect(b.size).to eq(305)
    expect(b.to_a.size).to eq(3) # the long String is a chunk of its own
    expect(b.read(2)).to eq("ab")
    expect(b.skip(1)).to eq(1)
    expect(b.read(301)).to eq(("x" * 300) + "d")
    expect(b.read_all(1)).to eq("e")
    expect(b).to be_empty
    expect(b.read(1)).to be_nil
    expect(b.read(0)).to eq("")
    expect { b.read_all(1) }.to raise_error(EOFError)
    expect { b.skip_all(1) }.to raise_error(EOFError)
  end

  it "takes a big String by reference and leaves the caller's String alone" do
    require "objspace"
    big = "y" * 10_000
    b = MPK::Buffer.new
    b << big
    chunk = b.instance_variable_get(:@chunks)[0]
    expect(chunk).to be_frozen
    expect(ObjectSpace.memsize_of(chunk)).to be < 1000 # shares big's bytes
    big << "z" # the caller may change its String: the buffer holds a frozen copy-on-write duplicate
    expect(b.to_s).to eq("y" * 10_000)
  end

  it "read_all and skip_all leave the bytes when too few are buffered" do
    b = MPK::Buffer.new
    b << "abcd"
    expect { b.read_all(5) }.to raise_error(EOFError)
    expect(b.size).to eq(4)
    b.skip_all(2)
    expect(b.read).to eq("cd")
  end

  it "reads from and writes to an IO" do
    b = MPK::Buffer.new(StringIO.new("hello world"), io_buffer_size: 3)
    expect(b.read_all(5)).to eq("hello")
    expect(b.read).to eq(" world")
    out = StringIO.new(+"")
    w = MPK::Buffer.new(out)
    w << "abc" << ("q" * 500)
    expect(w.write_to(out)).to eq(503)
    expect(out.string).to eq("abc" + ("q" * 500))
    expect(w).to be_empty
  end

  it "behaves like msgpack-ruby's Buffer for a random script" do
    require "msgpack"
    r = Random.new(3)
    mine = MPK::Buffer.new
    theirs = MessagePack::Buffer.new
    500.times do
      case r.rand(6)
      when 0, 1
        s = r.bytes([1, 5, 300, 2000].sample(random: r))
        mine << s
        theirs << s
      when 2 then n = r.rand(0..400); expect(mine.read(n)).to eq(theirs.read(n))
      when 3 then n = r.rand(0..400); expect(mine.skip(n)).to eq(theirs.skip(n))
      when 4
        n = r.rand(0..400)
        a = (mine.read_all(n) rescue :eof)
        b = (theirs.read_all(n) rescue :eof)
        expect(a).to eq(b)
      else expect(mine.to_s).to eq(theirs.to_s)
      end
      expect(mine.size).to eq(theirs.size)
    end
  end

  it "Packer#buffer and Unpacker#buffer are live views" do
    pk = MPK::Packer.new
    pk.write([1, 2])
    expect(pk.buffer.size).to eq(3)
    expect(pk.buffer.read(1)).to eq("\x92".b)
    expect(pk.to_s).to eq("\x01\x02".b)
    pk.buffer << "\xc0".b
    expect(pk.to_s).to eq("\x01\x02\xc0".b)
    pk.buffer.clear
    expect(pk).to be_empty

    u = MPK::Unpacker.new
    u.buffer << "\x01\xa3abc\x02".b
    expect(u.buffer.size).to eq(6)
    expect(u.read).to eq(1)
    expect(u.buffer.read(4)).to eq("\xa3abc".b)
    expect(u.read).to eq(2)
    expect(u.buffer).to be_empty
  end
end

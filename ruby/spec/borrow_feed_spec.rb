# frozen_string_literal: true

require_relative "spec_helper"
require "msgpack"

# Unpacker#feed of a String of 64 KiB or more into an empty unpacker reads that String's bytes in
# place (feed_borrowed in rb_unpacker.c); every behaviour must be the same as with the copy.
RSpec.describe "Unpacker fed a large String" do
  big_str = "s" * 70_000
  big_bin = ("\x01\x02".b * 40_000)
  values = [big_str, 1, [1, 2], { "k" => big_bin }, "tail", nil]
  bytes = values.map { |v| MessagePack.pack(v) }.join.b

  around do |ex|
    ex.run
  ensure
    MPK._borrow_feed = true
  end

  [true, false].each do |borrow|
    context(borrow ? "borrowing" : "copying (MPK._borrow_feed = false)") do
      before { MPK._borrow_feed = borrow }

      it "gives every value, fed whole" do
        u = MPK::Unpacker.new
        u.feed(bytes)
        expect(u.each.to_a).to eq(values)
      end

      it "gives every value whatever the split of a large first chunk and the rest" do
        [65_536, 70_002, 70_003, 70_005, 70_010, 80_000, bytes.bytesize - 10, bytes.bytesize - 1].each do |cut|
          u = MPK::Unpacker.new
          got = []
          u.feed(bytes.byteslice(0, cut))
          u.each { |v| got << v }
          u.feed(bytes.byteslice(cut..))
          u.each { |v| got << v }
          expect(got).to eq(values), "cut at #{cut}"
        end
      end

      it "reads the bytes as they were fed, whatever the caller does to its String afterwards" do
        s = bytes.dup
        u = MPK::Unpacker.new
        u.feed(s)
        expect(u.read).to eq(big_str)
        s.replace("\xc1" * s.bytesize)
        s.clear
        GC.start
        GC.compact if GC.respond_to?(:compact)
        expect(u.each.to_a).to eq(values.drop(1))
      end

      it "accepts frozen Strings and subclasses, and keeps offsets across feeds" do
        sub = Class.new(String)
        u = MPK::Unpacker.new
        u.feed(MessagePack.pack(7))
        expect(u.read).to eq(7)
        u.feed(sub.new(bytes).freeze)
        expect(u.each.to_a).to eq(values)
        bad = MessagePack.pack(big_str).b + "\xc1".b
        u.feed(bad)
        expect(u.read).to eq(big_str)
        expect { u.read }.to raise_error(MPK::MalformedFormatError) { |e|
          expect([e.kind, e.offset]).to eq([:invalid_byte, 1 + bytes.bytesize + bad.bytesize - 1])
        }
      end

      it "takes header reads, skip and reset on the fed bytes" do
        arr = MessagePack.pack([big_str, big_bin, 3])
        u = MPK::Unpacker.new
        u.feed(arr)
        expect(u.read_array_header).to eq(3)
        u.skip
        expect(u.read).to eq(big_bin)
        u.feed(MessagePack.pack("after"))
        expect(u.read).to eq(3)
        expect(u.read).to eq("after")
        u.feed(arr)
        u.reset
        u.feed(MessagePack.pack([1]))
        expect(u.read).to eq([1])
      end

      it "leaves a large feed that is not a whole value pending until the rest comes" do
        one = MessagePack.pack(big_str)
        u = MPK::Unpacker.new
        u.feed(one.byteslice(0, 66_000))
        expect(u.each.to_a).to eq([])
        u.feed(one.byteslice(66_000..))
        expect(u.read).to eq(big_str)
        expect { u.read }.to raise_error(EOFError)
      end
    end
  end

  it "is on by default, and then holds no copy of the fed bytes" do
    require "objspace"
    expect(MPK._borrow_feed?).to be(true)
    u = MPK::Unpacker.new
    u.feed(bytes)
    expect(ObjectSpace.memsize_of(u)).to be < 65_536
    MPK._borrow_feed = false
    c = MPK::Unpacker.new
    c.feed(bytes)
    expect(ObjectSpace.memsize_of(c)).to be >= bytes.bytesize
  end
end

# A Packer#write that fails halfway leaves nothing of its value behind: the buffer goes back to
# where the value began, the bytes written before stay, and the next write starts a value of its
# own. (ruby/README.md, "MPK::Packer", after an error)
require_relative "spec_helper"
require "stringio"

RSpec.describe "Packer after a failed write" do
  class RaisingToMsgpack
    def initialize(how) = @how = how

    def to_msgpack(pk)
      pk.write_array_header(2)
      pk.write("started")
      @how == :raise ? raise("boom") : pk.write(Object.new)
    end
  end

  failing = {
    "an unsupported object deep inside" => [1, 2, { "a" => ["x" * 300, Object.new] }],
    "an Integer beyond 64 bits after a long string" => ["y" * 70_000, 2**70],
    "a to_msgpack that raises after writing" => { "k" => RaisingToMsgpack.new(:raise) },
    "a to_msgpack whose own write fails" => [RaisingToMsgpack.new(:unsupported)],
    "a Timestamp with bad nanoseconds" => [MPK::Timestamp.new(1, 2_000_000_000)],
  }

  failing.each do |what, value|
    it "rewinds #{what}: what came before stays, the next value is whole" do
      pk = MPK::Packer.new
      pk.write(1).write("before")
      expect { pk.write(value) }.to raise_error(StandardError)
      expect(pk.to_s).to eq(MPK.pack(1) + MPK.pack("before"))
      pk.write([3])
      expect(MPK::Unpacker.new.feed(pk.to_s).each.to_a).to eq([1, "before", [3]])
    end

    it "rewinds #{what} on an empty packer" do
      pk = MPK::Packer.new
      expect { pk.write(value) }.to raise_error(StandardError)
      expect(pk.size).to eq(0)
      expect(pk.empty?).to be(true)
    end

    it "sends the IO no part of #{what}" do
      io = StringIO.new("".b)
      pk = MPK::Packer.new(io)
      pk.write("a" * 40_000) # over the 32 KiB flush threshold: goes to the IO
      expect { pk.write(value) }.to raise_error(StandardError)
      pk.write(7)
      pk.flush
      expect(MPK::Unpacker.new.feed(io.string).each.to_a).to eq(["a" * 40_000, 7])
    end
  end

  it "keeps the values the user wrote by hand around the failed one" do
    pk = MPK::Packer.new
    pk.write_array_header(2).write(1)
    expect { pk.write([Object.new]) }.to raise_error(MPK::UnsupportedTypeError)
    pk.write(2)
    expect(MPK.unpack(pk.to_s)).to eq([1, 2])
  end
end

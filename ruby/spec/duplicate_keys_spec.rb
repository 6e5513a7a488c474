# frozen_string_literal: true

require_relative "spec_helper"

# spec/README.md, "Maps with duplicate keys": a conversion into a structure with unique keys gives
# the last pair's value, in every mpk implementation.
RSpec.describe "maps with duplicate keys" do
  let(:bytes) { ["83a16101a16202a16103"].pack("H*") } # {"a" => 1, "b" => 2, "a" => 3}

  it "keep the last value in MPK.unpack" do
    expect(MPK.unpack(bytes)).to eq("a" => 3, "b" => 2)
  end

  it "keep the last value with symbolize_keys and through a streaming Unpacker fed byte by byte" do
    expect(MPK.unpack(bytes, symbolize_keys: true)).to eq(a: 3, b: 2)
    u = MPK::Unpacker.new
    got = []
    bytes.each_byte { |b| u.feed_each(b.chr) { |v| got << v } }
    expect(got).to eq([{ "a" => 3, "b" => 2 }])
  end
end

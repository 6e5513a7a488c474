require_relative "spec_helper"

# The extension under the garbage collector's worst cases: GC.stress (a full GC at every
# allocation, so an object the extension forgot to keep alive is freed at once) on a small set of
# calls, and GC.compact / verify_compaction_references (objects move) around and inside them.
RSpec.describe "GC safety" do
  let(:value) do
    { "key" => ["x" * 300, "short", "\x00\xff".b * 200, 1.5, -(2**62), nil, true],
      "nested" => { "a" => [{ "b" => [] }, [[1, 2], { 3 => 4 }]] },
      "ts" => MPK::Timestamp.new(5, 6), "ext" => MPK::ExtensionValue.new(7, "p") }
  end

  def stressed
    GC.stress = true
    yield
  ensure
    GC.stress = false
  end

  it "packs and unpacks under GC.stress" do
    bytes = MPK.pack(value)
    back = bytes2 = nil
    stressed do
      bytes2 = MPK.pack(value)
      back = MPK.unpack(bytes2, allow_unknown_ext: true)
    end
    expect(bytes2).to eq(bytes)
    expect(back).to eq(value)
    sym = nil
    stressed { sym = MPK.unpack(bytes, symbolize_keys: true, freeze: true, allow_unknown_ext: true) }
    expect(sym[:nested]).to eq({ a: [{ b: [] }, [[1, 2], { 3 => 4 }]] })
  end

  it "streams in small pieces under GC.stress" do
    small = { "k" => ["x" * 40, [1, { "a" => 2 }], "b".b], "t" => MPK::Timestamp.new(1, 2) }
    bytes = MPK.pack(small) + MPK.pack([1, "two"])
    pieces = bytes.scan(/.{1,5}/mn)
    got = []
    stressed do
      u = MPK::Unpacker.new
      pieces.each { |c| u.feed_each(c) { |v| got << v } }
    end
    expect(got).to eq([small, [1, "two"]])
  end

  it "runs Factory procs (recursive too) under GC.stress" do
    pair = Struct.new(:a, :b)
    f = MPK::Factory.new
    f.register_type(1, pair, packer: ->(p, pk) { pk.write(p.a).write(p.b) }, unpacker: ->(u) { pair.new(u.read, u.read) },
                             recursive: true)
    v = [pair.new("x" * 30, pair.new(1, [2])), { "k" => pair.new(nil, "y") }]
    back = nil
    stressed { back = f.load(f.dump(v)) }
    expect(back).to eq(v)
  end

  it "keeps values intact when objects move (GC.verify_compaction_references)" do
    bytes = MPK.pack(Array.new(50) { value })
    values = MPK.unpack(bytes, allow_unknown_ext: true)
    GC.verify_compaction_references(double_heap: true, toward: :empty)
    expect(values).to eq(Array.new(50) { value })
    expect(MPK.pack(values)).to eq(bytes)
  end

  it "packs correctly when a callback compacts the heap mid-pack" do
    compactor = Class.new do
      def to_msgpack(pk)
        GC.compact
        pk.write("after compaction")
      end
    end
    pk = MPK::Packer.new
    pk.write(["x" * 1000, compactor.new, "y" * 1000])
    expect(MPK.unpack(pk.to_s)).to eq(["x" * 1000, "after compaction", "y" * 1000])
    u = MPK::Unpacker.new
    u.register_type(9) { |p| GC.compact; p * 2 }
    u.feed(MPK.pack([MPK::ExtensionValue.new(9, "ab"), "z" * 500]))
    expect(u.read).to eq(["abab", "z" * 500])
  end
end

RSpec.describe "GC safety with everything moving inside callbacks" do
  it "packs and unpacks right when callbacks run verify_compaction_references" do
    move = -> { GC.verify_compaction_references(double_heap: true, toward: :empty) }
    compactor = Class.new do
      define_method(:to_msgpack) { |pk| move.call; pk.write("after") }
    end
    pk = MPK::Packer.new
    pk.write([compactor.new, "x" * 500, compactor.new])
    expect(MPK.unpack(pk.to_s)).to eq(["after", "x" * 500, "after"])
    pt = Struct.new(:a)
    f = MPK::Factory.new
    f.register_type(1, pt, packer: ->(o, p) { move.call; p.write(o.a) }, unpacker: ->(u) { move.call; pt.new(u.read) },
                           recursive: true)
    v = [pt.new(pt.new(1)), { "k" => pt.new("y" * 300) }]
    expect(f.load(f.dump(v))).to eq(v)
  end
end

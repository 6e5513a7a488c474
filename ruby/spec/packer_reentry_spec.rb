# A Packer refuses writes that would land in the middle of a value being packed: from an ext
# packer proc into the packer that called it, and from another Thread while a callback of the
# pack runs. A to_msgpack(packer) callback writing its own value stays allowed.
# (ruby/README.md, "Packer: callbacks and threads")
require_relative "spec_helper"

RSpec.describe "Packer re-entry" do
  let(:point) { Struct.new(:x, :y) }

  def factory_with(klass, &proc)
    f = MPK::Factory.new
    f.register_type(1, klass, packer: proc, unpacker: ->(s) { s })
    f
  end

  {
    "write" => ->(pk) { pk.write("inner" * 1000) },
    "pack" => ->(pk) { pk.pack(1) },
    "write_nil" => ->(pk) { pk.write_nil },
    "write_true" => ->(pk) { pk.write_true },
    "write_false" => ->(pk) { pk.write_false },
    "write_float" => ->(pk) { pk.write_float(1.5) },
    "write_float32" => ->(pk) { pk.write_float32(1.5) },
    "write_array_header" => ->(pk) { pk.write_array_header(3) },
    "write_map_header" => ->(pk) { pk.write_map_header(1) },
    "write_bin_header" => ->(pk) { pk.write_bin_header(3) },
    "write_ext" => ->(pk) { pk.write_ext(2, "abc") },
    "reset" => ->(pk) { pk.reset },
    "clear" => ->(pk) { pk.clear },
    "write_to" => ->(pk) { pk.write_to(StringIO.new) },
  }.each do |name, call|
    it "refuses #{name} from an ext packer proc into the packer that runs it; the pack goes on" do
      caught = []
      pk = nil
      klass = point
      f = factory_with(klass) do |_v|
        begin
          call.(pk)
        rescue RuntimeError => e
          caught << e.message
        end
        "payload"
      end
      pk = f.packer
      pk.write("before")
      pk.write(["a" * 100, klass.new(1, 2), { "b" => [1, 2] }])
      expect(caught).to eq(["MPK::Packer used from inside its own ext type callback"])
      want = MPK.pack("before") + MPK.pack(["a" * 100, MPK::ExtensionValue.new(1, "payload"), { "b" => [1, 2] }])
      expect(pk.to_s.b).to eq(want.b)
    end
  end

  it "lets the error out of the proc: the write raises and what was written before stays" do
    pk = nil
    klass = point
    f = factory_with(klass) { |_v| pk.write(1); "x" }
    pk = f.packer
    pk.write([1, 2, 3])
    expect { pk.write(["x", klass.new(0, 0)]) }.to raise_error(RuntimeError, /inside its own ext type callback/)
    pk.reset
    pk.write("next")
    expect(pk.to_s).to eq(MPK.pack("next"))
  end

  it "refuses the write from a recursive ext packer proc into the outer packer, not into its own" do
    outer = nil
    klass = point
    caught = []
    f = MPK::Factory.new
    f.register_type(1, klass, packer: lambda { |v, sub|
      begin
        outer.write(9)
      rescue RuntimeError => e
        caught << e.message
      end
      sub.write([v.x, v.y])
    }, unpacker: ->(u) { u.read }, recursive: true)
    outer = f.packer
    outer.write([klass.new(1, 2)])
    expect(caught.size).to eq(1)
    expect(f.load(outer.to_s)).to eq([[1, 2]])
  end

  it "still lets to_msgpack(packer) write its own value" do
    klass = Class.new do
      def to_msgpack(pk = nil)
        return MPK.pack(self) unless pk
        pk.write_array_header(2)
        pk.write("own")
        pk.write(7)
        pk
      end
    end
    pk = MPK::Packer.new
    pk.write({ "k" => klass.new })
    expect(MPK.unpack(pk.to_s)).to eq({ "k" => ["own", 7] })
    expect(MPK.unpack(MPK.pack([klass.new, 1]))).to eq([["own", 7], 1])
  end

  it "refuses a write from another thread while a callback of the pack runs" do
    klass = point
    inside = Queue.new
    go_on = Queue.new
    f = factory_with(klass) do |_v|
      inside << true
      go_on.pop
      "p"
    end
    pk = f.packer
    packing = Thread.new { pk.write(["a", klass.new(1, 2), "z"]) }
    inside.pop
    expect { pk.write("other") }.to raise_error(RuntimeError, /another thread/)
    expect { pk.reset }.to raise_error(RuntimeError, /another thread/)
    go_on << true
    packing.join
    expect(pk.to_s.b).to eq(MPK.pack(["a", MPK::ExtensionValue.new(1, "p"), "z"]).b)
    pk.reset
    pk.write(1) # usable again once the pack ended
    expect(pk.to_s).to eq("\x01".b)
  end
end

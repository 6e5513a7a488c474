require_relative "spec_helper"

# Hostile input: a clear MPK::Error with the spec's kind and an offset inside the input, never a
# crash, a hang or another exception; declared lengths never allocate more than the input
# justifies (checked in child processes under `ulimit -v`).
RSpec.describe "hostile input" do
  def mutate(r, bytes)
    b = bytes.dup
    case r.rand(4)
    when 0 then b.setbyte(r.rand(b.bytesize), r.rand(256)) unless b.empty?
    when 1 then b = b.byteslice(0, r.rand(b.bytesize + 1))
    when 2 then b.insert(r.rand(b.bytesize + 1), r.bytes(r.rand(1..4)))
    else 3.times { b.setbyte(r.rand(b.bytesize), [0xc1, 0xdd, 0xdf, 0xdb, 0xc9, 0xff].sample(random: r)) unless b.empty? }
    end
    b
  end

  let(:seed_values) do
    [{ "a" => [1, 2.5, "xyz" * 40, "\x00\x01".b * 200], "b" => { "c" => [nil, true, -7, 2**40] } },
     [MPK::Timestamp.new(1, 2), MPK::ExtensionValue.new(3, "abc"), [[[[]]]], {}],
     (1..100).to_a, "é" * 300]
  end

  it "mutated messages: a value or an MPK::Error with an offset inside the input (4000 cases, seeded)" do
    r = Random.new(4242)
    seeds = seed_values.map { |v| MPK.pack(v) }
    4000.times do |i|
      bytes = mutate(r, seeds[i % seeds.size])
      begin
        MPK.unpack(bytes, allow_unknown_ext: true)
      rescue MPK::Error => e
        expect(MPK::Error.instance_method(:kind).bind_call(e)).to be_a(Symbol)
        expect(e.offset).to be_between(0, bytes.bytesize), "#{bytes.unpack1('H*')}: #{e.inspect}"
      end
      next unless i % 10 == 0

      u = MPK::Unpacker.new(allow_unknown_ext: true)
      begin
        bytes.each_char { |c| u.feed_each(c) { |_| nil } }
      rescue MPK::Error => e
        expect(e.offset).to be_between(0, bytes.bytesize)
      end
    end
  end

  # Streaming loses or duplicates no byte and reports an error at the same offset, whatever the
  # chunk boundaries: a damaged stream fed whole, byte by byte and in random pieces gives the same
  # values, then the same error (or none, with the same bytes left over).
  it "a damaged stream gives the same values and error under every chunking (500 cases, seeded)" do
    r = Random.new(99)
    seeds = seed_values.map { |v| MPK.pack(v) }
    outcome = lambda do |pieces|
      u = MPK::Unpacker.new(allow_unknown_ext: true)
      got = []
      err = nil
      begin
        pieces.each { |c| u.feed_each(c) { |v| got << v } }
      rescue MPK::Error => e
        err = [e.class, e.kind, e.offset]
      end
      [got, err, err ? nil : u.buffered_size]
    end
    500.times do
      bytes = mutate(r, Array.new(r.rand(1..4)) { seeds.sample(random: r) }.join)
      whole = outcome.call([bytes])
      expect(outcome.call(bytes.each_char.to_a)).to eq(whole)
      cuts = []
      pos = 0
      while pos < bytes.bytesize
        n = r.rand(1..64)
        cuts << bytes.byteslice(pos, n)
        pos += n
      end
      expect(outcome.call(cuts)).to eq(whole)
    end
  end

  it "random bytes never raise anything but MPK::Error" do
    r = Random.new(7)
    3000.times do
      bytes = r.bytes(r.rand(0..40))
      begin
        MPK.unpack(bytes, allow_unknown_ext: true)
      rescue MPK::Error
        nil
      end
    end
  end

  it "1,000,000 nested arrays: depth_limit at 1024, or decoded without recursion when allowed" do
    bytes = ("\x91" * 1_000_000) + "\x00"
    expect { MPK.unpack(bytes) }.to raise_error(MPK::StackError) { |e| expect(e.offset).to eq(1024) }
    v = MPK.unpack(bytes, limits: { depth: 2**32 - 1 })
    depth = 0
    while v.is_a?(Array)
      v = v[0]
      depth += 1
    end
    expect([depth, v]).to eq([1_000_000, 0])
  end

  describe "bounded memory (child process under ulimit -v 300 MB)", :subprocess do
    # 100,000 nested array 16 heads, each declaring 65535 elements, each count fitting the bytes
    # after it on its own: reserving each Array's capacity would take 50 GB.
    it "declared lengths and counts that the input cannot hold fail before any allocation" do
      out, status = run_capped(<<~RUBY, 300_000)
        cases = {
          "array 32 of 2^32-1" => "\\xdd\\xff\\xff\\xff\\xff".b + "\\x00".b * 1000,
          "map 32 of 2^32-1" => "\\xdf\\xff\\xff\\xff\\xff".b + "\\x00".b * 1000,
          "str 32 of 4 GiB" => "\\xdb\\xff\\xff\\xff\\xff".b + "x" * 1000,
          "bin 32 of 4 GiB" => "\\xc6\\xff\\xff\\xff\\xff".b,
          "ext 32 of 4 GiB" => "\\xc9\\xff\\xff\\xff\\xff\\x01".b,
          "nested arrays of 65535" => "\\xdc\\xff\\xff".b * 100_000,
        }
        cases.each do |name, bytes|
          begin
            MPK.unpack(bytes, limits: { depth: 2**32 - 1 })
            puts "\#{name}: no error"
          rescue MPK::Error => e
            puts "\#{name}: \#{e.kind} \#{e.offset}"
          end
        end
      RUBY
      expect(status).to be_success, out
      expect(out.lines.map(&:chomp)).to eq([
        "array 32 of 2^32-1: truncated 0", "map 32 of 2^32-1: truncated 0", "str 32 of 4 GiB: truncated 0",
        "bin 32 of 4 GiB: truncated 0", "ext 32 of 4 GiB: truncated 0",
        # the first array 16 head whose own 65535 elements cannot fit in the bytes after it
        "nested arrays of 65535: truncated #{3 * (((300_000 - 3 - 65_535) / 3) + 1)}",
      ])
    end

    it "an Unpacker buffers only the bytes that arrived, and a str limit stops a huge str at its head" do
      out, status = run_capped(<<~RUBY, 300_000)
        u = MPK::Unpacker.new
        u.feed("\\xdb\\xff\\xff\\xff\\xff".b)
        chunk = "x" * 65_536
        640.times { u.feed(chunk); u.each { } } # 40 MiB of a 4 GiB str: still incomplete
        puts u.buffered_size
        v = MPK::Unpacker.new(limits: { str: 1 << 20 })
        v.feed("\\xdb\\xff\\xff\\xff\\xff".b)
        begin
          v.each { }
        rescue MPK::LengthLimitError => e
          puts "\#{e.kind} \#{e.offset}"
        end
      RUBY
      expect(status).to be_success, out
      expect(out).to eq("#{5 + 640 * 65_536}\nlength_limit 0\n")
    end
  end
end

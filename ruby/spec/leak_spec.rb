require_relative "spec_helper"

# No memory is lost on any path, the error paths included (a callback raising in the middle of a
# deeply nested decode frees the core reader's deep stack through the decoder's free function):
# a child process repeats every path and its resident memory must stay flat after a warm-up.
RSpec.describe "memory leaks", :subprocess do
  it "repeating every path keeps the resident set flat" do
    out, status = run_capped(<<~'RUBY', 2_000_000)
      def rss = File.read("/proc/self/status")[/VmRSS:\s+(\d+)/, 1].to_i
      v = MPK::ExtensionValue.new(7, "x")
      1000.times { v = [v] } # far deeper than the reader's 16-level inline stack
      deep = MPK.pack(v)
      boom = MPK::Factory.new
      boom.register_type(7, Object, packer: ->(_) { "" }, unpacker: ->(_) { raise ArgumentError, "boom" })
      big = { "k" => ["v" * 100, 1.5, -1, { "n" => [nil, true] }] * 50 }
      packed = MPK.pack(big)
      round = lambda do
        MPK.unpack(MPK.pack(big))
        begin; boom.load(deep); rescue ArgumentError; end
        begin; MPK.unpack(packed[0..-2]); rescue MPK::Error; end
        begin; MPK.pack([Object.new]); rescue MPK::Error; end
        u = MPK::Unpacker.new
        packed.each_char.each_slice(97) { |c| u.feed_each(c.join) { } }
        u = MPK::Unpacker.new
        u.feed(packed + "\xc1".b)
        begin; u.each { }; rescue MPK::Error; end
        pk = MPK::Packer.new
        pk.write(big).write_array_header(3).to_s
        b = MPK::Buffer.new
        b << packed << "x"
        b.read_all(10)
      end
      1000.times { round.call } # up to the steady state of garbage waiting for the GC
      GC.start
      before = rss
      2000.times { round.call }
      GC.start
      puts rss - before
    RUBY
    expect(status).to be_success, out
    expect(out.to_i).to be < 10_000, "resident set grew by #{out.to_i} KiB" # KiB
  end
end

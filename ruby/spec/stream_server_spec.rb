require_relative "spec_helper"
require_relative "../examples/stream_server"

# ruby/examples/stream_server.rb over real sockets: the server reads in random sizes and the client
# writes in random pieces, so messages arrive split at random places (seeded).
RSpec.describe "examples/stream_server.rb" do
  around do |ex|
    @server = StreamExample::Server.new(read_size: -> { @rng.rand(1..50) })
    @rng = Random.new(2024)
    @server.start
    ex.run
  ensure
    @server.stop
  end

  it "answers every message, in order, whatever the read and write boundaries" do
    client = StreamExample::Client.new(@server.port)
    requests = Array.new(300) do |i|
      case i % 3
      when 0 then ["add", Array.new(@rng.rand(0..20)) { @rng.rand(-1000..1000) }]
      when 1 then ["echo", ["x" * @rng.rand(0..3000), { "k" => [i, 1.5, nil] }]]
      else ["size", ["é" * @rng.rand(0..100), @rng.bytes(@rng.rand(0..500))]]
      end
    end
    ids = client.send_requests(requests, cut: -> { @rng.rand(1..100) })
    responses = ids.map { client.read_response }
    client.close
    expect(responses.map { |r| r[1] }).to eq(ids)
    responses.zip(requests).each do |(kind, _id, error, result), (method, params)|
      expect([kind, error]).to eq([1, nil])
      case method
      when "add" then expect(result).to eq(params.sum)
      when "echo" then expect(result).to eq(params)
      else expect(result).to eq(params.map(&:bytesize))
      end
    end
  end

  it "reports a malformed stream with its kind and offset, then hangs up" do
    client = StreamExample::Client.new(@server.port)
    ok = MPK.pack([0, 1, "add", [1, 2]])
    client.send_raw(ok + "\x94\x00\xc1".b)
    expect(client.read_response).to eq([1, 1, nil, 3])
    expect(client.read_response).to eq([1, nil, "MalformedFormatError: invalid_byte at byte #{ok.bytesize + 2}", nil])
    expect { client.read_response }.to raise_error(EOFError)
    client.close
  end

  it "refuses a str over the server's limit at its head, before buffering it" do
    client = StreamExample::Client.new(@server.port)
    client.send_raw("\x94\x00\x01\xa3add\x91\xdb\x7f\xff\xff\xff".b) # a 2 GiB str announced
    expect(client.read_response).to eq([1, nil, "LengthLimitError: length_limit at byte 8", nil])
    client.close
  end
end

# The seed's stream server on mpk: a TCP server on 127.0.0.1 whose connections feed every read
# from the socket to an MPK::Unpacker and handle each complete message as it arrives, whatever the
# read boundaries (the seed's Server#receive_data), answering in msgpack-rpc's shape:
#   request  [0, msgid, method, params]  ->  response [1, msgid, error, result]
#
#   ruby -I lib examples/stream_server.rb        # starts a server, runs a client against it
#
# As a library (ruby/spec/stream_server_spec.rb): StreamExample::Server.new.start, Client.new(port).
require "socket"
require "mpk"

module StreamExample
  # Bytes one message may carry in a str, bin or ext: the unpacker buffers one incomplete message,
  # so a server lowers the length limits to what it expects from an untrusted peer.
  LIMITS = { str: 1 << 20, bin: 1 << 20, ext: 1 << 20, depth: 64 }.freeze

  # One client connection.
  class Connection
    # read_size: a callable giving the size of the next read (the specs make it random).
    def initialize(socket, read_size: -> { 64 * 1024 })
      @socket = socket
      @read_size = read_size
      @unpacker = MPK::Unpacker.new(limits: LIMITS)
    end

    def run
      loop { receive_data(@socket.readpartial(@read_size.call)) }
    rescue EOFError, IOError, Errno::ECONNRESET
      nil # the client hung up
    rescue MPK::Error => e
      # a malformed stream: say where, then hang up (the stream cannot be resynchronised)
      reply(nil, "#{e.class.name.split('::').last}: #{e.kind} at byte #{e.offset}", nil)
    ensure
      @socket.close unless @socket.closed?
    end

    # The seed's receive_data: every complete message in the bytes so far, in order.
    def receive_data(data)
      @unpacker.feed_each(data) { |msg| handle(msg) }
    end

    def handle(msg)
      unless msg.is_a?(Array) && msg.size == 4 && msg[0] == 0
        return reply(nil, "not a request: #{msg.inspect[0, 60]}", nil)
      end
      _, id, method, params = msg
      case method
      when "add" then reply(id, nil, params.sum)
      when "echo" then reply(id, nil, params)
      when "size" then reply(id, nil, params.map { |p| p.respond_to?(:bytesize) ? p.bytesize : nil })
      else reply(id, "no method #{method.inspect}", nil)
      end
    end

    def reply(id, error, result)
      @socket.write(MPK.pack([1, id, error, result]))
    end
  end

  class Server
    def initialize(host = "127.0.0.1", port = 0, read_size: nil)
      @server = TCPServer.new(host, port)
      @read_size = read_size
      @threads = []
    end

    def port
      @server.addr[1]
    end

    def start
      @acceptor = Thread.new do
        loop do
          socket = @server.accept
          conn = @read_size ? Connection.new(socket, read_size: @read_size) : Connection.new(socket)
          @threads << Thread.new { conn.run }
        end
      rescue IOError, Errno::EBADF
        nil # stopped
      end
      self
    end

    # Stops accepting and waits for the open connections to finish.
    def stop
      @server.close
      @acceptor&.join
      @threads.each(&:join)
      nil
    end
  end

  class Client
    def initialize(port, host = "127.0.0.1")
      @socket = TCPSocket.new(host, port)
      @socket.setsockopt(Socket::IPPROTO_TCP, Socket::TCP_NODELAY, 1)
      @unpacker = MPK::Unpacker.new(@socket)
      @next_id = 0
    end

    # Sends requests [[method, params], ...] as one byte stream cut into pieces of the sizes
    # `cut.call` gives (each written on its own), and returns their msgids.
    def send_requests(requests, cut: -> { 1 << 30 })
      pk = MPK::Packer.new
      ids = requests.map do |method, params|
        id = (@next_id += 1)
        pk.write([0, id, method, params])
        id
      end
      bytes = pk.to_s
      pos = 0
      while pos < bytes.bytesize
        n = [cut.call, 1].max
        @socket.write(bytes.byteslice(pos, n))
        pos += n
      end
      ids
    end

    def send_raw(bytes)
      @socket.write(bytes)
    end

    # The next response [1, msgid, error, result] (reads the socket until one is complete).
    def read_response
      @unpacker.read
    end

    def call(method, *params)
      send_requests([[method, params]])
      _, _, error, result = read_response
      raise error if error
      result
    end

    def close
      @socket.close
    end
  end
end

if $PROGRAM_NAME == __FILE__
  server = StreamExample::Server.new.start
  client = StreamExample::Client.new(server.port)
  puts "add(1, 2, 3) = #{client.call('add', 1, 2, 3)}"
  puts "echo = #{client.call('echo', 'hello', [1.5, nil]).inspect}"
  ids = client.send_requests([["add", [1, 1]], ["add", [2, 2]]], cut: -> { 3 }) # 3-byte writes
  ids.each { puts "response #{client.read_response.inspect}" }
  client.close
  server.stop
end

module MPK
  # A byte queue (msgpack-ruby's Buffer): appends at the back, reads and skips at the front.
  # It is a queue of chunks: a String of `reference_threshold` bytes or more is taken in by
  # reference (a frozen copy-on-write duplicate, no byte copied), smaller ones are gathered into
  # the last chunk; reads cut chunks with byteslice, which shares the bytes of long slices.
  # With an IO, reads pull from the IO when the queue runs short, and flush writes the queue to it.
  class Buffer
    DEFAULT_REFERENCE_THRESHOLD = 256
    IO_CHUNK = 64 * 1024

    attr_reader :io

    def initialize(io = nil, options = nil)
      if io.is_a?(Hash) && options.nil?
        options = io
        io = nil
      end
      options ||= {}
      @io = io
      @threshold = options.fetch(:read_reference_threshold, DEFAULT_REFERENCE_THRESHOLD)
      @io_chunk = options.fetch(:io_buffer_size, IO_CHUNK)
      @chunks = [] # frozen Strings (referenced) and at most one growing tail
      @tail = nil  # the last chunk when it is ours to append to
      @head_off = 0 # bytes already read from @chunks[0]
      @size = 0
    end

    # Appends data (a String); returns self.
    def <<(data)
      write(data)
      self
    end

    # Appends data and returns its byte size.
    def write(data)
      data = data.to_str
      n = data.bytesize
      return 0 if n.zero?
      if n >= @threshold
        @chunks << (data.frozen? ? data : data.dup.freeze)
        @tail = nil
      else
        unless @tail
          @tail = String.new(capacity: [@threshold * 4, n].max, encoding: Encoding::BINARY)
          @chunks << @tail
        end
        @tail << data.b
      end
      @size += n
      n
    end

    def size
      @size
    end

    def empty?
      @size.zero?
    end

    # read -> everything; read(n) -> up to n bytes ("" when n is 0, nil at the end); out is
    # replaced by the result when given.
    def read(n = nil, out = nil)
      return finish(out, read_everything) if n.nil?
      return finish(out, "".b) if n.zero?
      fill_from_io while @size < n && @io && fill_from_io
      return finish(out, nil) if @size.zero?
      finish(out, take([n, @size].min))
    end

    # read_all(n) -> exactly n bytes or EOFError (nothing is consumed then).
    def read_all(n = nil, out = nil)
      return finish(out, read_everything) if n.nil?
      fill_from_io while @size < n && @io && fill_from_io
      raise EOFError, "#{n} bytes wanted, #{@size} buffered" if @size < n
      finish(out, take(n))
    end

    # Drops up to n bytes; returns how many.
    def skip(n)
      fill_from_io while @size < n && @io && fill_from_io
      k = [n, @size].min
      drop(k)
      k
    end

    # Drops exactly n bytes or raises EOFError (nothing dropped).
    def skip_all(n)
      fill_from_io while @size < n && @io && fill_from_io
      raise EOFError, "#{n} bytes wanted, #{@size} buffered" if @size < n
      drop(n)
      self
    end

    # All buffered bytes, without consuming them.
    def to_s
      return "".b if @size.zero?
      first = @chunks[0].byteslice(@head_off..)
      return first if @chunks.size == 1
      s = String.new(capacity: @size, encoding: Encoding::BINARY)
      s << first
      @chunks.drop(1).each { |c| s << c }
      s
    end
    alias to_str to_s

    # The buffered bytes as the chunks they are held in.
    def to_a
      return [] if @size.zero?
      [@chunks[0].byteslice(@head_off..), *@chunks.drop(1)]
    end

    # Writes everything to io (default: the buffer's IO) and empties the buffer; returns the bytes
    # written.
    def write_to(io = @io)
      n = 0
      to_a.each { |c| n += io.write(c) }
      clear
      n
    end

    def flush
      write_to(@io) if @io
      @io.flush if @io.respond_to?(:flush)
      self
    end

    def clear
      @chunks.clear
      @tail = nil
      @head_off = 0
      @size = 0
      nil
    end
    alias reset clear

    def close
      @io&.close
      nil
    end

    private

    def finish(out, s)
      return s unless out
      return nil if s.nil?
      out.replace(s)
    end

    def read_everything
      fill_from_io while @io && fill_from_io
      s = to_s
      clear
      s
    end

    def fill_from_io
      return false unless @io
      data = begin
        @io.readpartial(@io_chunk)
      rescue EOFError
        nil
      end
      return false if data.nil? || data.empty?
      write(data)
      true
    end

    def take(n)
      first = @chunks[0]
      if first.bytesize - @head_off >= n # within the first chunk: one slice
        s = first.byteslice(@head_off, n)
        drop(n)
        return s
      end
      s = String.new(capacity: n, encoding: Encoding::BINARY)
      left = n
      while left.positive?
        c = @chunks[0]
        k = [c.bytesize - @head_off, left].min
        s << c.byteslice(@head_off, k)
        drop(k)
        left -= k
      end
      s
    end

    def drop(n)
      @size -= n
      while n.positive?
        c = @chunks[0]
        avail = c.bytesize - @head_off
        if n < avail
          @head_off += n
          return
        end
        n -= avail
        @chunks.shift
        @tail = nil if c.equal?(@tail)
        @head_off = 0
      end
    end
  end
end

module MPK
  # Packer#buffer and Unpacker#buffer: the Buffer calls, on the packer's output or the unpacker's
  # pending input (live views, not copies).
  class BufferView
    def initialize(owner)
      @owner = owner
    end

    def io
      @owner.io
    end

    def empty?
      size.zero?
    end

    def read(n = nil, out = nil)
      s = n.nil? ? take(size) : n.zero? ? "".b : (size.zero? ? nil : take(n))
      out && s ? out.replace(s) : s
    end

    def read_all(n = nil, out = nil)
      n ||= size
      raise EOFError, "#{n} bytes wanted, #{size} buffered" if size < n
      s = take(n)
      out ? out.replace(s) : s
    end

    def skip(n)
      take(n).bytesize
    end

    def skip_all(n)
      raise EOFError, "#{n} bytes wanted, #{size} buffered" if size < n
      take(n)
      self
    end

    def to_a
      empty? ? [] : [to_s]
    end

    def write_to(io)
      s = read
      io.write(s)
    end

    def <<(data)
      write(data)
      self
    end
  end

  class PackerBuffer < BufferView
    def size = @owner.size
    def to_s = @owner.to_s
    alias to_str to_s

    def clear
      @owner.reset
      nil
    end
    alias reset clear

    # Raw bytes appended to the output (already MessagePack).
    def write(data)
      data = data.to_str
      @owner._write_raw(data)
      data.bytesize
    end

    private

    def take(n)
      all = @owner.to_s
      @owner.reset
      @owner._write_raw(all.byteslice(n..)) if n < all.bytesize
      all.byteslice(0, n)
    end
  end

  class UnpackerBuffer < BufferView
    def size = @owner.buffered_size
    def to_s = @owner._pending
    alias to_str to_s

    def clear
      @owner.reset
      nil
    end
    alias reset clear

    def write(data)
      data = data.to_str
      @owner.feed(data)
      data.bytesize
    end

    private

    def take(n)
      @owner._take(n)
    end
  end

  class Packer
    def buffer
      @buffer ||= PackerBuffer.new(self)
    end
  end

  class Unpacker
    def buffer
      @buffer ||= UnpackerBuffer.new(self)
    end
  end
end

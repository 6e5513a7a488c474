# The error classes, ExtensionValue and Timestamp: defined before the extension loads, which looks
# them up by name.
module MPK
  # Mixed into every error mpk raises: the spec's kind (a Symbol, e.g. :truncated) and the byte
  # offset in the input where it was found (nil for packing errors).
  module Error
    attr_reader :kind, :offset
  end

  # Decoding errors (msgpack-ruby's class names).
  class UnpackError < StandardError; include Error; end
  # :invalid_byte, :invalid_timestamp, :invalid_utf8 (strict_utf8 only), :trailing_bytes
  class MalformedFormatError < UnpackError; end
  # :depth_limit
  class StackError < UnpackError; end
  # :length_limit (a str/bin/ext length or an array/map count over its limit)
  class LengthLimitError < UnpackError; end
  module TypeError; end
  # :type (read_array_header / read_map_header found another type)
  class UnexpectedTypeError < UnpackError; include TypeError; end
  # :unknown_ext_type (an ext type with no registered unpacker, allow_unknown_ext off)
  class UnknownExtTypeError < UnpackError; end
  # :truncated — the input ends inside a value. An EOFError, as msgpack-ruby raises.
  class TruncatedError < ::EOFError; include Error; end

  # Packing errors.
  class PackError < StandardError; include Error; end
  # :unsupported_type — an object with no MessagePack form (its class and path are in the message)
  class UnsupportedTypeError < PackError; end
  # :invalid_timestamp — a Timestamp whose nsec is outside 0..999999999
  class InvalidTimestampError < PackError; end

  # An ext value of a type nothing is registered for (with allow_unknown_ext: true).
  ExtensionValue = Struct.new(:type, :payload)

  # The timestamp extension type (-1): seconds since the epoch and nanoseconds 0..999999999.
  class Timestamp
    TYPE = -1

    attr_reader :sec, :nsec

    def initialize(sec, nsec)
      @sec = sec
      @nsec = nsec
    end

    # A Timestamp from an ext -1 payload of 4, 8 or 12 bytes.
    def self.from_msgpack_ext(data)
      case data.bytesize
      when 4
        new(data.unpack1("N"), 0)
      when 8
        n = data.unpack1("Q>")
        nsec = n >> 34
        raise_invalid(nsec) if nsec > 999_999_999
        new(n & 0x3_ffff_ffff, nsec)
      when 12
        nsec, sec = data.unpack("Nq>")
        raise_invalid(nsec) if nsec > 999_999_999
        new(sec, nsec)
      else
        e = MalformedFormatError.new("invalid timestamp: payload of #{data.bytesize} bytes")
        e.instance_variable_set(:@kind, :invalid_timestamp)
        raise e
      end
    end

    def self.raise_invalid(nsec)
      e = MalformedFormatError.new("invalid timestamp: nsec #{nsec}")
      e.instance_variable_set(:@kind, :invalid_timestamp)
      raise e
    end
    private_class_method :raise_invalid

    # The shortest ext -1 payload for sec and nsec.
    def self.to_msgpack_ext(sec, nsec)
      unless nsec.is_a?(Integer) && nsec.between?(0, 999_999_999)
        e = InvalidTimestampError.new("nanoseconds outside 0..999999999: #{nsec.inspect}")
        e.instance_variable_set(:@kind, :invalid_timestamp)
        raise e
      end
      if sec >= 0 && sec < (1 << 34)
        return [sec].pack("N") if nsec.zero? && sec < (1 << 32)
        return [(nsec << 34) | sec].pack("Q>")
      end
      raise RangeError, "seconds beyond int64: #{sec}" unless sec.between?(-(1 << 63), (1 << 63) - 1)
      [nsec, sec].pack("Nq>")
    end

    def to_msgpack_ext
      self.class.to_msgpack_ext(sec, nsec)
    end

    def ==(other)
      other.class == self.class && sec == other.sec && nsec == other.nsec
    end
    alias eql? ==

    def hash
      [self.class, sec, nsec].hash
    end

    def inspect
      "#<#{self.class} sec=#{sec} nsec=#{nsec}>"
    end
  end

  # Opt-in: Time as the timestamp ext type, as in msgpack-ruby:
  #   MPK::DefaultFactory.register_type(MPK::Timestamp::TYPE, Time,
  #                                     packer: MPK::Time::Packer, unpacker: MPK::Time::Unpacker)
  # or simply MPK::Time.register (same thing, on DefaultFactory or the factory given).
  module Time
    Packer = ->(time) { MPK::Timestamp.to_msgpack_ext(time.tv_sec, time.tv_nsec) }
    Unpacker = lambda do |payload|
      ts = MPK::Timestamp.from_msgpack_ext(payload)
      ::Time.at(ts.sec, ts.nsec, :nanosecond)
    end

    def self.register(factory = MPK::DefaultFactory)
      factory.register_type(MPK::Timestamp::TYPE, ::Time, packer: Packer, unpacker: Unpacker)
    end
  end
end

# spec/ typed values (spec/README.md) <-> mpk: used by the interop driver and the corpus specs.
# Encoding writes the value with MPK::Packer's calls (headers for typed arrays and maps, so key
# order and duplicate keys survive; write_float32 for float 32); decoding unpacks with two private
# options that keep what Ruby's types would blur: maps as Pairs (an Array of [key, value]) and
# float 32 values as F32.
require "json"
require "mpk"

module TypedValues
  MAX_SAFE = 2**53 - 1

  class BadRequest < StandardError; end

  # An encode the spec refuses: `kind` is what a driver answers.
  class Refused < StandardError
    attr_reader :kind

    def initialize(kind, msg)
      @kind = kind
      super(msg)
    end
  end

  class Pairs < Array; end
  F32 = Struct.new(:value)

  module_function

  def unhex(s)
    raise BadRequest, "hex must be a String" unless s.is_a?(String)
    h = s.delete("-")
    raise BadRequest, "bad hex #{s.inspect}" unless h.match?(/\A(?:[0-9a-fA-F]{2})*\z/)
    [h].pack("H*")
  end

  def integer(m)
    return m if m.is_a?(Integer)
    return Integer(m, 10) if m.is_a?(String) && m.match?(/\A-?\d+\z/)
    raise BadRequest, "integer member #{m.inspect}"
  end

  def float(m)
    case m
    when "NaN" then Float::NAN
    when "Infinity" then Float::INFINITY
    when "-Infinity" then -Float::INFINITY
    when Numeric then m.to_f
    else raise BadRequest, "float member #{m.inspect}"
    end
  end

  def value_key(typed)
    raise BadRequest, "a typed value is an object with one key" unless typed.is_a?(Hash) && typed.size == 1
    typed.keys[0]
  end

  # The MessagePack bytes of a typed value, packed by mpk.
  def encode(typed)
    pk = MPK::Packer.new
    write(pk, typed)
    pk.to_s
  rescue MPK::InvalidTimestampError => e
    raise Refused.new("invalid_timestamp", e.message)
  rescue RangeError => e
    raise Refused.new("bad_request", e.message)
  end

  def write_plain(pk, v)
    case v
    when nil, true, false, Integer, Float, String then pk.write(v)
    when Array
      pk.write_array_header(v.size)
      v.each { |x| write_plain(pk, x) }
    when Hash
      pk.write_map_header(v.size)
      v.each { |k, x| pk.write(k); write_plain(pk, x) }
    else raise BadRequest, "not plain JSON"
    end
  end

  def write(pk, typed)
    key = value_key(typed)
    m = typed[key]
    case key
    when "nil" then raise(BadRequest, "nil member") unless m.nil?; pk.write_nil
    when "bool" then raise(BadRequest, "bool member") unless m == true || m == false; pk.write(m)
    when "number" then raise(BadRequest, "number member") unless m.is_a?(Numeric); pk.write(m)
    when "bignum", "int" then pk.write(integer(m))
    when "float32" then pk.write_float32(float(m))
    when "float64" then pk.write_float(float(m))
    when "string" then raise(BadRequest, "string member") unless m.is_a?(String); pk.write(m)
    when "string_hex" then pk.write(unhex(m).force_encoding(Encoding::UTF_8))
    when "binary" then pk.write(unhex(m))
    when "array" then raise(BadRequest, "array member") unless m.is_a?(Array); write_plain(pk, m)
    when "map" then raise(BadRequest, "map member") unless m.is_a?(Hash); write_plain(pk, m)
    when "typed_array"
      raise BadRequest, "typed_array member" unless m.is_a?(Array)
      pk.write_array_header(m.size)
      m.each { |x| write(pk, x) }
    when "typed_map"
      raise BadRequest, "typed_map member" unless m.is_a?(Array)
      pk.write_map_header(m.size)
      m.each do |pair|
        raise BadRequest, "typed_map pair" unless pair.is_a?(Array) && pair.size == 2
        write(pk, pair[0])
        write(pk, pair[1])
      end
    when "ext"
      raise BadRequest, "ext member" unless m.is_a?(Array) && m.size == 2
      pk.write_ext(integer(m[0]), unhex(m[1]))
    when "timestamp"
      raise BadRequest, "timestamp member" unless m.is_a?(Array) && m.size == 2
      pk.write(MPK::Timestamp.new(integer(m[0]), integer(m[1])))
    else raise BadRequest, "unknown type #{key.inspect}"
    end
  end

  def decode_options(limits = nil, strict_utf8 = false)
    opts = { allow_unknown_ext: true, _pairs: Pairs, _float32: F32 }
    opts[:limits] = limits.to_h { |k, v| [k.to_sym, v] } if limits
    opts[:strict_utf8] = true if strict_utf8
    opts
  end

  # The canonical typed value of one MessagePack value (raises mpk's errors).
  def decode(bytes, limits = nil, strict_utf8 = false)
    canonical(MPK.unpack(bytes, decode_options(limits, strict_utf8)))
  end

  def int_json(n)
    n.abs <= MAX_SAFE ? n : n.to_s
  end

  def float_json(f)
    return "NaN" if f.nan?
    return (f.positive? ? "Infinity" : "-Infinity") if f.infinite?
    f
  end

  def canonical(v)
    case v
    when nil then { "nil" => nil }
    when true, false then { "bool" => v }
    when Integer then { "int" => int_json(v) }
    when F32 then { "float32" => float_json(v.value) }
    when Float then { "float64" => float_json(v) }
    when String
      if v.encoding == Encoding::BINARY then { "binary" => v.unpack1("H*") }
      elsif v.valid_encoding? then { "string" => v }
      else { "string_hex" => v.b.unpack1("H*") }
      end
    when Pairs then { "typed_map" => v.map { |k, x| [canonical(k), canonical(x)] } }
    when Array then { "typed_array" => v.map { |x| canonical(x) } }
    when MPK::ExtensionValue then { "ext" => [v.type, v.payload.unpack1("H*")] }
    when MPK::Timestamp then { "timestamp" => [int_json(v.sec), v.nsec] }
    else raise TypeError, "no typed form for #{v.class}"
    end
  end
end

# Comparison for the specs: both sides become a neutral form, compared the way spec/README.md says
# (a `number` equals an int or float of the same value; NaNs are equal; -0.0 keeps its sign; str
# and string_hex are the same when the bytes are).
module TypedValues
  module_function

  def plain_neutral(v)
    case v
    when nil then [:nil]
    when true, false then [:bool, v]
    when Numeric then [:number, v]
    when String then [:str, v.b]
    when Array then [:array, v.map { |x| plain_neutral(x) }]
    when Hash then [:map, v.map { |k, x| [[:str, k.b], plain_neutral(x)] }]
    else raise BadRequest, "not plain JSON"
    end
  end

  def typed_neutral(typed)
    key = value_key(typed)
    m = typed[key]
    case key
    when "nil" then [:nil]
    when "bool" then [:bool, m]
    when "number" then [:number, m]
    when "bignum", "int" then [:int, integer(m)]
    when "float32" then [:f32, float(m)]
    when "float64" then [:f64, float(m)]
    when "string" then [:str, m.b]
    when "string_hex" then [:str, unhex(m)]
    when "binary" then [:bin, unhex(m)]
    when "array", "map" then plain_neutral(m)
    when "typed_array" then [:array, m.map { |x| typed_neutral(x) }]
    when "typed_map" then [:map, m.map { |k, x| [typed_neutral(k), typed_neutral(x)] }]
    when "ext" then integer(m[0]) == -1 ? ts_neutral(unhex(m[1])) : [:ext, integer(m[0]), unhex(m[1])]
    when "timestamp" then [:ts, integer(m[0]), integer(m[1])]
    else raise BadRequest, key
    end
  end

  def ts_neutral(payload)
    t = MPK::Timestamp.from_msgpack_ext(payload)
    [:ts, t.sec, t.nsec]
  end

  def same_float?(a, b)
    return a.nan? && b.nan? if a.nan? || b.nan?
    a == b && (a.zero? ? (1.0 / a) == (1.0 / b) : true)
  end

  def same?(want, got)
    if want[0] == :number
      x = want[1]
      case got[0]
      when :int then return x.is_a?(Integer) ? x == got[1] : x == got[1]
      when :f32, :f64 then return same_float?(x.to_f, got[1])
      else return false
      end
    end
    return false unless want[0] == got[0]
    case want[0]
    when :f32, :f64 then same_float?(want[1], got[1])
    when :array then want[1].size == got[1].size && want[1].zip(got[1]).all? { |w, g| same?(w, g) }
    when :map
      want[1].size == got[1].size &&
        want[1].zip(got[1]).all? { |(wk, wv), (gk, gv)| same?(wk, gk) && same?(wv, gv) }
    else want == got
    end
  end

  # The neutral form of a value decoded with decode_options.
  def value_neutral(v)
    case v
    when nil then [:nil]
    when true, false then [:bool, v]
    when Integer then [:int, v]
    when F32 then [:f32, v.value]
    when Float then [:f64, v]
    when String then [v.encoding == Encoding::BINARY ? :bin : :str, v.b]
    when Pairs then [:map, v.map { |k, x| [value_neutral(k), value_neutral(x)] }]
    when Array then [:array, v.map { |x| value_neutral(x) }]
    when MPK::ExtensionValue then [:ext, v.type, v.payload.b]
    when MPK::Timestamp then [:ts, v.sec, v.nsec]
    else raise TypeError, v.class.name
    end
  end

  def load_cases(path)
    JSON.parse(File.read(path), max_nesting: false)
  end
end

# The interop driver of mpk's Ruby gem (spec/README.md, "Drivers"): JSON Lines in, one answer line
# out per request, flushed. Run as spec/drivers/ruby (made by `make driver-ruby`). Stream requests go
# through MPK::Unpacker: feed, then each, chunk by chunk.
require_relative "typed_values"

# {"stream" => hex, "cuts" => [...]}: the bytes fed to an Unpacker in chunks split at the cuts, each
# followed by #each; then the input ends. The Unpacker has no end-of-input call: the bytes it still
# holds (buffered_size) are an incomplete value, whose truncation offset is the one MPK.unpack of
# those bytes gives, counted from the stream's start (spec/README.md).
def stream_answer(req)
  hex = req["stream"]
  cuts = req.fetch("cuts", [])
  return { "error" => "bad_request" } unless hex.is_a?(String) && hex.match?(/\A(?:[0-9a-fA-F]{2})*\z/)
  data = [hex].pack("H*")
  unless cuts.is_a?(Array) && cuts.all? { |c| c.is_a?(Integer) && c >= 0 && c <= data.bytesize }
    return { "error" => "bad_request" }
  end
  opts = TypedValues.decode_options(req["limits"], req["strict_utf8"])
  unpacker = MPK::Unpacker.new(opts)
  values = []
  at = 0
  begin
    (cuts.sort + [data.bytesize]).each do |stop|
      next if stop <= at
      unpacker.feed(data.byteslice(at, stop - at))
      at = stop
      unpacker.each { |obj| values << TypedValues.canonical(obj) }
    end
  rescue MPK::Error => e
    return { "values" => values, "error" => e.kind.to_s, "offset" => e.offset }
  end
  left = unpacker.buffered_size
  return { "values" => values } if left.zero?
  rest = data.bytesize - left
  begin
    MPK.unpack(data.byteslice(rest, left), opts)
  rescue MPK::Error => e
    return { "values" => values, "error" => e.kind.to_s, "offset" => rest + e.offset }
  end
  { "values" => values, "error" => "unpack_decoded_what_the_stream_held", "offset" => rest }
rescue TypeError, RangeError, ArgumentError, NoMethodError # malformed limits
  { "error" => "bad_request" }
end

def answer(req)
  return { "error" => "bad_request" } unless req.is_a?(Hash)
  return stream_answer(req) if req.key?("stream")
  if req.key?("encode")
    begin
      { "hex" => TypedValues.encode(req["encode"]).unpack1("H*") }
    rescue TypedValues::Refused => e
      { "error" => e.kind }
    rescue TypedValues::BadRequest, ArgumentError, TypeError, RangeError, MPK::PackError
      { "error" => "bad_request" }
    end
  elsif req.key?("decode")
    hex = req["decode"]
    return { "error" => "bad_request" } unless hex.is_a?(String) && hex.match?(/\A(?:[0-9a-fA-F]{2})*\z/)
    begin
      { "value" => TypedValues.decode([hex].pack("H*"), req["limits"], req["strict_utf8"]) }
    rescue MPK::Error => e
      { "error" => e.kind.to_s, "offset" => e.offset }
    rescue TypeError, RangeError, ArgumentError, NoMethodError # malformed limits
      { "error" => "bad_request" }
    end
  else
    { "error" => "bad_request" }
  end
end

$stdout.sync = true
$stdin.each_line do |line|
  next if line.strip.empty?
  reply = begin
    answer(JSON.parse(line, max_nesting: false))
  rescue JSON::ParserError, TypedValues::BadRequest
    { "error" => "bad_request" }
  end
  $stdout.write(JSON.generate(reply, max_nesting: false) + "\n")
end

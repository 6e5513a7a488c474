# The interop driver of mpk's Ruby gem (spec/README.md, "Drivers"): JSON Lines in, one answer line
# out per request, flushed. Run as spec/drivers/ruby (made by `make driver-ruby`).
require_relative "typed_values"

def answer(req)
  return { "error" => "bad_request" } unless req.is_a?(Hash)
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

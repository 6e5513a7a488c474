# require "mpk/msgpack": code written for msgpack-ruby runs on mpk unchanged. When the msgpack gem
# is not loaded, MessagePack becomes another name for MPK and a later `require "msgpack"` finds
# mpk/shim/msgpack.rb (this directory goes first on $LOAD_PATH) instead of the gem, so the two never
# mix. When the gem is loaded already, nothing changes (with a warning).
require "mpk"

if defined?(::MessagePack) && !::MessagePack.equal?(::MPK)
  warn "mpk/msgpack: MessagePack is already defined (the msgpack gem is loaded); leaving it alone"
else
  MessagePack = MPK unless defined?(::MessagePack)
  shim = File.expand_path("shim", __dir__)
  $LOAD_PATH.unshift(shim) unless $LOAD_PATH.include?(shim)
  require "msgpack" # the shim: marks "msgpack" as loaded
end

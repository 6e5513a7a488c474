# require "mpk/msgpack": code written for msgpack-ruby runs on mpk unchanged. MessagePack becomes
# another name for MPK, and a later `require "msgpack"` is a no-op, when the msgpack gem is not
# loaded already; if it is, nothing changes (with a warning) so the two never mix.
require "mpk"

if defined?(::MessagePack) && !::MessagePack.equal?(::MPK)
  warn "mpk/msgpack: MessagePack is already defined (the msgpack gem is loaded); leaving it alone"
else
  MessagePack = MPK unless defined?(::MessagePack)
  begin
    found = $LOAD_PATH.resolve_feature_path("msgpack")
    $LOADED_FEATURES << found[1] if found && !$LOADED_FEATURES.include?(found[1])
  rescue LoadError
    nil # the gem is not installed: nothing to shadow
  end
end

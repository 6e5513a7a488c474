# mpk — MessagePack for Ruby on mpk's C core, with the msgpack-ruby 1.x API under MPK.
require "mpk/version"
require "mpk/types"
require "mpk/mpk"
require "mpk/factory"
require "mpk/buffer"

module MPK
  DefaultFactory = Factory.new
  # DefaultFactory is not shareable: other Ractors pack and unpack without its registrations.
  MAIN_RACTOR = defined?(Ractor) ? Ractor.current : nil
  private_constant :MAIN_RACTOR

  def self.default_factory_types?
    return false if MAIN_RACTOR && !Ractor.current.equal?(MAIN_RACTOR)

    !DefaultFactory.empty?
  end
  private_class_method :default_factory_types?

  # MPK.pack(obj) -> String; pack(obj, io) writes to io; pack(obj, options) (options are accepted
  # for msgpack-ruby compatibility; none changes the output). MPK.unpack(string, options = nil) ->
  # the one value in string (bytes after it are an error); load also takes an IO (read whole).
  # pack/unpack/dump/load are defined by the extension, which handles the common case itself (one
  # String, nothing registered on DefaultFactory) and hands the rest to these:
  def self._pack_general(obj, io = nil, options = nil)
    io = nil if io.is_a?(Hash)
    out = default_factory_types? ? _pack(obj, DefaultFactory.prototype) : _pack(obj, nil)
    return out unless io
    io.write(out)
    nil
  end

  def self._unpack_general(data, options = nil)
    data = data.read if data.respond_to?(:read)
    return _unpack(data, options) unless default_factory_types?

    DefaultFactory.load(data, options)
  end
end

require "mpk/core_ext"

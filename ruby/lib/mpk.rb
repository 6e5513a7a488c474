# mpk — MessagePack for Ruby on mpk's C core, with the msgpack-ruby 1.x API under MPK.
require "mpk/version"
require "mpk/types"
require "mpk/mpk"
require "mpk/factory"
require "mpk/buffer"

module MPK
  DefaultFactory = Factory.new

  # pack(obj) -> String; pack(obj, io) writes to io; pack(obj, options) (options are accepted for
  # msgpack-ruby compatibility; none changes the output).
  def self.pack(obj, io = nil, options = nil)
    io = nil if io.is_a?(Hash)
    out = DefaultFactory.empty? ? _pack(obj, nil) : _pack(obj, DefaultFactory.prototype)
    return out unless io
    io.write(out)
    nil
  end

  # unpack(string, options = nil) -> the one value in string (bytes after it are an error).
  # load also takes an IO (read whole).
  def self.unpack(data, options = nil)
    data = data.read if data.respond_to?(:read)
    return _unpack(data, options) if DefaultFactory.empty?

    DefaultFactory.load(data, options)
  end

  class << self
    alias dump pack
    alias load unpack
  end
end

require "mpk/core_ext"

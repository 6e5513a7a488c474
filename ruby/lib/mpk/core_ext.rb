# #to_msgpack on the core classes, as msgpack-ruby defines it: obj.to_msgpack gives the bytes,
# obj.to_msgpack(packer) writes obj into packer and returns it.
module MPK
  module CoreExt
    def to_msgpack(packer = nil)
      if packer
        packer.write(self)
        packer
      else
        MPK.pack(self)
      end
    end
  end
end

[NilClass, TrueClass, FalseClass, Integer, Float, String, Array, Hash, Symbol,
 MPK::ExtensionValue, MPK::Timestamp].each do |klass|
  klass.include(MPK::CoreExt) unless klass.method_defined?(:to_msgpack)
end

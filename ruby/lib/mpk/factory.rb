module MPK
  class Packer
    # register_type(type, klass, method_name = nil) { |obj| payload }: objects of klass (and its
    # subclasses) are packed as ext `type` whose payload is the block's (or obj.method_name's) String.
    def register_type(type, klass, method_name = nil, &block)
      proc = block || (method_name && method_name.to_sym.to_proc)
      raise ArgumentError, "register_type needs a block or a method name" unless proc
      _register_type(type, klass, proc, false)
    end

    def registered_types
      _ext_types.map { |klass, (type, proc, _rec)| { type: type, class: klass, packer: proc } }
    end

    def type_registered?(klass_or_type)
      _ext_types.any? { |klass, (type, _p, _r)| klass_or_type == klass || klass_or_type == type }
    end

    def to_a
      [to_s]
    end

    # msgpack-ruby's typed write calls: each checks its argument's type, then writes it.
    def write_int(v) = write(typed(v, Integer))
    def write_string(v) = write(typed(v, String))
    def write_symbol(v) = write(typed(v, Symbol))
    def write_array(v) = write(typed(v, Array))
    def write_hash(v) = write(typed(v, Hash))
    def write_extension(v) = write(typed(v, ExtensionValue))

    def write_bin(v)
      v = typed(v, String)
      write_bin_header(v.bytesize)
      _write_raw(v)
    end

    private def typed(v, klass)
      raise ArgumentError, "expected #{klass}, got #{v.class}" unless v.is_a?(klass)
      v
    end

    def full_pack
      s = to_s
      reset
      s
    end
  end

  class Unpacker
    # register_type(type, klass = nil, method_name = nil) { |payload| object }: ext `type` is
    # unpacked by the block (or klass.method_name(payload)).
    def register_type(type, klass = nil, method_name = nil, &block)
      proc = block || (klass && method_name && klass.method(method_name).to_proc)
      raise ArgumentError, "register_type needs a block or a class and a method name" unless proc
      _register_type(type, klass, proc, false)
    end

    def registered_types
      _ext_types.map { |type, (klass, proc, _rec)| { type: type, class: klass, unpacker: proc } }
    end

    def type_registered?(klass_or_type)
      _ext_types.any? { |type, (klass, _p, _r)| klass_or_type == klass || klass_or_type == type }
    end

    # Reads one value and requires the buffer to be empty afterwards.
    def full_unpack
      v = read
      reset
      v
    end
  end

  # Packers and unpackers that share registered ext types (msgpack-ruby's Factory).
  class Factory
    def initialize
      @packer_types = [] # [type, klass, packer proc, recursive]
      @unpacker_types = {} # type => [klass, unpacker proc, recursive]
      @oversized = nil # [type, packer proc]: Integers beyond 64 bits
      @prototype = nil
    end

    # register_type(type, klass, packer: proc_or_method_name, unpacker: proc_or_method_name,
    #               recursive: false)
    # The defaults are klass#to_msgpack_ext and klass.from_msgpack_ext. With recursive: true the
    # packer proc is called as (obj, packer) and writes the payload into that packer, and the
    # unpacker proc is called with an Unpacker over the payload.
    def register_type(type, klass, options = { packer: :to_msgpack_ext, unpacker: :from_msgpack_ext })
      raise FrozenError, "can't modify frozen MPK::Factory" if frozen?
      raise RangeError, "ext type must be -128..127, not #{type.inspect}" unless type.is_a?(Integer) && type.between?(-128, 127)
      raise ArgumentError, "expected a Class or Module, not #{klass.inspect}" unless klass.is_a?(Module)

      recursive = options[:recursive] ? true : false
      oversized = options[:oversized_integer_extension] ? true : false
      if oversized && !klass.equal?(Integer)
        raise ArgumentError, "oversized_integer_extension: true is only for Integer"
      end
      packer = options[:packer]
      packer = packer.to_sym.to_proc if packer.is_a?(Symbol) || packer.is_a?(String)
      unpacker = options[:unpacker]
      if unpacker.is_a?(Symbol) || unpacker.is_a?(String)
        unpacker = klass.respond_to?(unpacker) ? klass.method(unpacker).to_proc : nil
      end
      if packer && oversized
        @oversized = [type, packer]
      elsif packer
        @packer_types.reject! { |t| t[1] == klass }
        @packer_types << [type, klass, packer, recursive]
      end
      @unpacker_types[type] = [klass, unpacker, recursive] if unpacker
      @prototype = nil
      @unpacker_table = nil
      MPK._default_types = true if defined?(MPK::DefaultFactory) && equal?(MPK::DefaultFactory)
      nil
    end

    def registered_types(selector = :both)
      list = []
      if selector == :both || selector == :packer
        @packer_types.each { |type, klass, proc, _| list << { type: type, class: klass, packer: proc } }
      end
      if selector == :both || selector == :unpacker
        @unpacker_types.each { |type, (klass, proc, _)| list << { type: type, class: klass, unpacker: proc } }
      end
      list
    end

    def type_registered?(klass_or_type, selector = :both)
      registered_types(selector).any? { |t| t[:class] == klass_or_type || t[:type] == klass_or_type }
    end

    def empty?
      @packer_types.empty? && @unpacker_types.empty? && @oversized.nil?
    end

    def packer(*args)
      pk = Packer.new(*args)
      @packer_types.each { |type, klass, proc, rec| pk._register_type(type, klass, proc, rec) }
      pk._register_oversized(*@oversized) if @oversized
      pk
    end

    def unpacker(*args)
      u = Unpacker.new(*args)
      @unpacker_types.each { |type, (klass, proc, rec)| u._register_type(type, klass, proc, rec) }
      u
    end

    def dump(obj, *args)
      if args.empty?
        MPK._pack(obj, prototype)
      else
        pk = packer(*args)
        pk.write(obj)
        pk.flush
        pk.io ? nil : pk.to_s
      end
    end
    alias pack dump

    def load(src, options = nil)
      src = src.read if src.respond_to?(:read)
      opts = options ? options.dup : {}
      opts[:_ext_types] = unpacker_table unless @unpacker_types.empty?
      MPK._unpack(src, opts)
    end
    alias unpack load

    def freeze
      prototype
      unpacker_table
      @packer_types.freeze
      @unpacker_types.freeze
      super
    end

    # A pool of packers and unpackers for threads to share (msgpack-ruby's Factory#pool).
    def pool(size = 1, **options)
      Pool.new(frozen? ? self : dup.freeze, size, options.empty? ? nil : options)
    end

    class Pool
      def initialize(factory, size, options)
        @factory = factory
        @size = size
        @options = options
        @packers = []
        @unpackers = []
        @lock = Mutex.new
      end

      def load(data)
        unpacker { |u| u.feed(data); u.full_unpack }
      end

      def dump(obj)
        packer { |pk| pk.write(obj).full_pack }
      end

      def packer
        pk = @lock.synchronize { @packers.pop } || @factory.packer
        begin
          yield pk
        ensure
          pk.reset
          @lock.synchronize { @packers << pk if @packers.size < @size }
        end
      end

      def unpacker
        u = @lock.synchronize { @unpackers.pop } || (@options ? @factory.unpacker(@options) : @factory.unpacker)
        begin
          yield u
        ensure
          u.reset
          @lock.synchronize { @unpackers << u if @unpackers.size < @size }
        end
      end
    end

    # A packer carrying the registered types, whose registry MPK._pack borrows.
    def prototype
      @prototype ||= packer
    end

    def unpacker_table
      return @unpacker_table if frozen? && @unpacker_table
      table = {}
      @unpacker_types.each { |type, (klass, proc, rec)| table[type] = [klass, proc, rec].freeze }
      @unpacker_table = table.freeze
    end
  end
end

require_relative "spec_helper"
require_relative "../spec_support/typed_values"
require "stringio"

# Every case of spec/vectors: decode of every listed form, encode to the shortest form, every
# negative case's kind and offset, every encode refusal; and every valid form through the streaming
# Unpacker fed one byte at a time and, up to 4 KiB, as two chunks split at every position.
TV = TypedValues

def tv_hex(h) = [h.delete("-")].pack("H*")

def tv_value_key(c) = (c.keys & TypedValues::VALUE_KEYS).first

module TypedValues
  VALUE_KEYS = %w[nil bool number bignum string binary array map ext timestamp int float32 float64 string_hex
                  typed_array typed_map].freeze
end

def stream_values(forms, opts, chunks)
  u = MPK::Unpacker.new(opts)
  out = []
  chunks.each do |c|
    u.feed(c)
    u.each { |v| out << v }
  end
  [out, u.buffered_size]
end

Dir[File.join(VECTORS, "*.json")].sort.each do |path|
  file = File.basename(path)
  cases = TV.load_cases(path)
  RSpec.describe "corpus #{file}" do
    cases.each_with_index do |c, i|
      name = "#{i}: #{c['name'] || c.reject { |k, _| k == 'msgpack' }.to_s[0, 60]}"
      opts = TV.decode_options(c["limits"], c["strict_utf8"])
      if c.key?("encode_error")
        it "#{name} is refused with #{c['encode_error']}" do
          typed = { tv_value_key(c) => c[tv_value_key(c)] }
          expect { TV.encode(typed) }.to raise_error(TV::Refused) { |e| expect(e.kind).to eq(c["encode_error"]) }
        end
      elsif c.key?("error")
        it "#{name} fails with #{c['error']} at #{c['offset']}" do
          expect { MPK.unpack(tv_hex(c["msgpack"]), opts) }.to raise_error(MPK::Error) { |e|
            expect([e.kind.to_s, e.offset]).to eq([c["error"], c["offset"]])
          }
        end
        unless c["error"] == "trailing_bytes"
          it "#{name} fails through an IO-fed Unpacker too (truncated at the same offset)" do
            bytes = tv_hex(c["msgpack"])
            u = MPK::Unpacker.new(StringIO.new(bytes), opts.merge(read_size: 3))
            # an empty stream holds no value: a plain EOFError, the end of the values
            next expect { u.read }.to raise_error(EOFError, "end of input") if bytes.empty?

            expect { u.read }.to raise_error(MPK::Error) { |e|
              expect(e.kind.to_s).to eq(c["error"]) if c["error"] == "truncated" && e.kind == :truncated
              expect(e.offset).to eq(c["offset"]) if e.kind.to_s == c["error"] && c["error"] == "truncated"
            }
          end
        end
      else
        key = tv_value_key(c)
        typed = { key => c[key] }
        forms = c["msgpack"].map { |h| tv_hex(h) }
        it "#{name}: decodes every form and encodes the shortest" do
          want = TV.typed_neutral(typed)
          forms.each do |bytes|
            got = TV.value_neutral(MPK.unpack(bytes, opts))
            expect(TV.same?(want, got)).to be(true), "#{bytes.unpack1('H*')[0, 80]} gave #{got.inspect[0, 200]}"
          end
          encoded = TV.encode(typed)
          if key == "number"
            expect(forms).to include(encoded)
          else
            expect(encoded.unpack1("H*")).to eq(forms[0].unpack1("H*"))
          end
        end
        it "#{name}: streams split at every byte" do
          want = TV.typed_neutral(typed)
          forms.each do |bytes|
            out, left = stream_values(forms, opts, bytes.each_char.map(&:b))
            expect([out.size, left]).to eq([1, 0])
            expect(TV.same?(want, TV.value_neutral(out[0]))).to be(true)
            next if bytes.bytesize > 4096

            (1...bytes.bytesize).each do |cut|
              out, left = stream_values(forms, opts, [bytes.byteslice(0, cut), bytes.byteslice(cut..)])
              expect([out.size, left]).to eq([1, 0]), "split at #{cut}"
              expect(TV.same?(want, TV.value_neutral(out[0]))).to be(true), "split at #{cut}"
            end
          end
        end
      end
    end
  end
end

package mpk

import (
	"reflect"
)

// Types with methods written by mpkgen are encoded and decoded through them by Marshal,
// Unmarshal, Encoder, Decoder and mpkhttp, when the options are the defaults (the generated
// code knows no others): MarshalMsg appends to the output, and MpkDecodeNested decodes a value
// that was checked first. mpkgen writes, besides MarshalMsg and UnmarshalMsg,
//
//	func (*T) MpkGenerated(*T) {}
//	func (z *T) MpkDecodeNested(b []byte, depth int, budget int64) ([]byte, int64, error)
//
// MpkGenerated's parameter shows that the methods are T's own: a struct that embeds a generated
// type gets them promoted, with the embedded type in that place, and is encoded by its fields.

type generatedCodec interface {
	MarshalMsg(b []byte) ([]byte, error)
	MpkDecodeNested(b []byte, depth int, budget int64) ([]byte, int64, error)
}

// isGenerated reports whether *t has mpkgen's methods of its own.
func isGenerated(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	pt := reflect.PointerTo(t)
	m, ok := pt.MethodByName("MpkGenerated")
	return ok && pt.Implements(reflect.TypeFor[generatedCodec]()) &&
		m.Type.NumIn() == 2 && m.Type.In(1) == pt && m.Type.NumOut() == 0
}

// generatedEncoder encodes an addressable value through its MarshalMsg, and any other through
// the reflection encoder, which writes the same bytes.
func generatedEncoder(otherwise encoderFunc) encoderFunc {
	return func(e *encodeState, v reflect.Value) {
		if !v.CanAddr() {
			otherwise(e, v)
			return
		}
		out, err := v.Addr().Interface().(generatedCodec).MarshalMsg(e.buf)
		if err != nil {
			e.setError(err)
			return
		}
		e.buf = out
	}
}

// generatedDecoder checks the value (so malformed input gets the error Unmarshal gives, at the
// same offset) and decodes it through MpkDecodeNested when the decode runs with default options;
// otherwise through the reflection decoder.
func generatedDecoder(otherwise decoderFunc) decoderFunc {
	return func(d *decodeState, v reflect.Value) error {
		if !d.plain {
			return otherwise(d, v)
		}
		h := d.off
		if err := d.skip(); err != nil {
			return err
		}
		if d.data[h] == mNil {
			v.SetZero() // as the reflection decoder does for a struct
			return nil
		}
		// The generated code charges its allocations to what is left of this decode's budget.
		_, left, err := v.Addr().Interface().(generatedCodec).MpkDecodeNested(d.data[h:d.off], d.depth, max(d.maxAlloc-d.allocated, 0))
		d.allocated = d.maxAlloc - left
		if err != nil {
			err = shiftOffset(err, h)
			if d.base != 0 {
				err = shiftOffset(err, int(d.base))
			}
			if de, ok := err.(*DecodeError); ok {
				return de // over the allocation budget
			}
			d.save(err)
		}
		return nil
	}
}

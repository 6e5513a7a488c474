package mpk

import (
	"math"
	"reflect"
	"unsafe"
)

// Struct fields of plain kinds are read and written through their offset from the struct's
// address instead of through reflect.Value.Field and the typed setters: on the seed's Product
// this removed most of the per-field cost of Marshal and Unmarshal (the reflect calls check
// flags and kinds on every access). Only types whose memory layout is fixed by their kind take
// this path; anything with a Marshaler, an ext or a special meaning goes through its codec.

// fieldOp names the plain kind of a field.
type fieldOp uint8

const (
	opGeneric fieldOp = iota
	opBool
	opInt
	opInt8
	opInt16
	opInt32
	opInt64
	opUint
	opUint8
	opUint16
	opUint32
	opUint64
	opFloat32
	opFloat64
	opString
	opStrings // a slice of a string kind
)

func opFor(t reflect.Type) fieldOp {
	if implementsAny(t) {
		return opGeneric
	}
	switch t.Kind() {
	case reflect.Bool:
		return opBool
	case reflect.Int:
		return opInt
	case reflect.Int8:
		return opInt8
	case reflect.Int16:
		return opInt16
	case reflect.Int32:
		return opInt32
	case reflect.Int64:
		return opInt64
	case reflect.Uint:
		return opUint
	case reflect.Uint8:
		return opUint8
	case reflect.Uint16:
		return opUint16
	case reflect.Uint32:
		return opUint32
	case reflect.Uint64:
		return opUint64
	case reflect.Float32:
		return opFloat32
	case reflect.Float64:
		return opFloat64
	case reflect.String:
		return opString
	case reflect.Slice:
		if t == rawType {
			return opGeneric
		}
		el := t.Elem()
		if el.Kind() == reflect.String && !implementsAny(el) {
			return opStrings
		}
	}
	return opGeneric
}

// encodeOp appends the field at p to buf; it reports false for opGeneric. The buffer is passed
// by value rather than kept in the encodeState: a store of a slice into the heap costs a GC write
// barrier, which showed as a fifth of Marshal's time on Product.
func encodeOp(buf []byte, op fieldOp, p unsafe.Pointer) ([]byte, bool) {
	switch op {
	case opString:
		buf = AppendString(buf, *(*string)(p))
	case opInt64:
		buf = AppendInt(buf, *(*int64)(p))
	case opInt:
		buf = AppendInt(buf, int64(*(*int)(p)))
	case opInt32:
		buf = AppendInt(buf, int64(*(*int32)(p)))
	case opInt16:
		buf = AppendInt(buf, int64(*(*int16)(p)))
	case opInt8:
		buf = AppendInt(buf, int64(*(*int8)(p)))
	case opUint64:
		buf = AppendUint(buf, *(*uint64)(p))
	case opUint:
		buf = AppendUint(buf, uint64(*(*uint)(p)))
	case opUint32:
		buf = AppendUint(buf, uint64(*(*uint32)(p)))
	case opUint16:
		buf = AppendUint(buf, uint64(*(*uint16)(p)))
	case opUint8:
		buf = AppendUint(buf, uint64(*(*uint8)(p)))
	case opBool:
		buf = AppendBool(buf, *(*bool)(p))
	case opFloat64:
		buf = AppendFloat64(buf, *(*float64)(p))
	case opFloat32:
		buf = AppendFloat32(buf, *(*float32)(p))
	case opStrings:
		ss := *(*[]string)(p)
		if ss == nil {
			return append(buf, mNil), true
		}
		buf = AppendArrayHeader(buf, uint32(len(ss)))
		for _, s := range ss {
			buf = AppendString(buf, s)
		}
	default:
		return buf, false
	}
	return buf, true
}

// decodeOp decodes the value at d.off into the field of type t at p.
func decodeOp(d *decodeState, op fieldOp, p unsafe.Pointer, t reflect.Type) error {
	data := d.data
	h := d.off
	switch op {
	case opString:
		if b, ok := d.strFast(); ok {
			*(*string)(p) = d.str(b)
			return nil
		}
		return stringDecoder(d, reflect.NewAt(t, p).Elem())
	case opStrings:
		return decodeStrings(d, p, t)
	case opFloat32, opFloat64:
		return floatDecoder(d, reflect.NewAt(t, p).Elem())
	case opBool:
		return boolDecoder(d, reflect.NewAt(t, p).Elem())
	}
	// An int of some width.
	neg, n, size, ok := readIntFast(data[h:])
	if ok && fitsOp(op, neg, n) {
		d.off += size
	} else {
		neg, n = false, 0
		tk, err := d.head()
		if err != nil {
			return err
		}
		switch tk.t {
		case IntType:
			neg, n = tk.neg, tk.n
		case NilType:
		default:
			return d.mismatch(tk, h, t)
		}
		if !fitsOp(op, neg, n) {
			return d.mismatch(tk, h, t)
		}
	}
	switch op {
	case opInt64:
		*(*int64)(p) = int64(n)
	case opInt:
		*(*int)(p) = int(n)
	case opInt32:
		*(*int32)(p) = int32(n)
	case opInt16:
		*(*int16)(p) = int16(n)
	case opInt8:
		*(*int8)(p) = int8(n)
	case opUint64:
		*(*uint64)(p) = n
	case opUint:
		*(*uint)(p) = uint(n)
	case opUint32:
		*(*uint32)(p) = uint32(n)
	case opUint16:
		*(*uint16)(p) = uint16(n)
	case opUint8:
		*(*uint8)(p) = uint8(n)
	}
	return nil
}

// fitsOp reports whether the int (neg, n) fits the field's width.
func fitsOp(op fieldOp, neg bool, n uint64) bool {
	v := int64(n)
	switch op {
	case opInt64, opInt:
		return neg || n <= math.MaxInt64
	case opInt32:
		return (neg && v >= math.MinInt32) || (!neg && n <= math.MaxInt32)
	case opInt16:
		return (neg && v >= math.MinInt16) || (!neg && n <= math.MaxInt16)
	case opInt8:
		return (neg && v >= math.MinInt8) || (!neg && n <= math.MaxInt8)
	case opUint64, opUint:
		return !neg
	case opUint32:
		return !neg && n <= math.MaxUint32
	case opUint16:
		return !neg && n <= math.MaxUint16
	case opUint8:
		return !neg && n <= math.MaxUint8
	}
	return false
}

// decodeStrings decodes an array of str into the []string-shaped field at p.
func decodeStrings(d *decodeState, p unsafe.Pointer, t reflect.Type) error {
	h := d.off
	tk, err := d.head()
	if err != nil {
		return err
	}
	switch tk.t {
	case NilType:
		*(*[]string)(p) = nil
		return nil
	case ArrayType:
	default:
		return d.mismatch(tk, h, t)
	}
	n := int(tk.n)
	ss := *(*[]string)(p)
	if ss != nil && cap(ss) >= n {
		ss = ss[:n]
		clear(ss)
	} else {
		if err := d.charge(16*uint64(n), h); err != nil {
			return err
		}
		ss = make([]string, n)
	}
	*(*[]string)(p) = ss
	d.depth++
	for i := range ss {
		if b, ok := d.strFast(); ok {
			ss[i] = d.str(b)
			continue
		}
		if err := stringDecoder(d, reflect.ValueOf(ss).Index(i)); err != nil {
			return err
		}
	}
	d.depth--
	return nil
}

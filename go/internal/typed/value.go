// Package typed reads and writes the typed-value notation of spec/README.md, and converts between
// typed values and MessagePack through mpk's writer and reader. The corpus tests and the interop
// driver share it.
package typed

import (
	"math"
	"strconv"
)

// Kind is the family of a typed value.
type Kind uint8

const (
	Nil Kind = iota
	Bool
	Int     // bignum and int
	Number  // the loose `number`: an int (IsInt) or a float64
	Float32 // F holds the value, exactly representable in binary32
	Float64
	Str // string and string_hex
	Bin
	Array // array and typed_array
	Map   // map and typed_map: Items holds key, value, key, value, ...
	Ext
	Timestamp
)

// Value is one typed value.
type Value struct {
	Kind  Kind
	Bool  bool
	Neg   bool   // Int: the value is I (negative); otherwise it is U
	I     int64  // Int when Neg
	U     uint64 // Int when !Neg
	IsInt bool   // Number: an integer (Neg, I, U) rather than a float (F)
	F     float64
	Bytes []byte // Str, Bin, Ext payload
	Ext   int8
	Sec   int64
	Nsec  int64 // any integer a case gives, so that one out of 0..999999999 can be refused
	Items []Value
}

// Equal reports whether got (a decoded value) equals want (a case's value) under the notation's
// rules: a loose number equals any int or float of the same numeric value, NaNs are equal, and
// the sign of zero counts.
func Equal(got, want Value) bool {
	if want.Kind == Number {
		switch {
		case want.IsInt && got.Kind == Int:
			return got.Neg == want.Neg && got.I == want.I && got.U == want.U
		case want.IsInt && (got.Kind == Float32 || got.Kind == Float64):
			return got.F == want.toFloat()
		case !want.IsInt && (got.Kind == Float32 || got.Kind == Float64):
			return sameFloat(got.F, want.F)
		case !want.IsInt && got.Kind == Int:
			return got.toFloat() == want.F && !(want.F == 0 && math.Signbit(want.F))
		}
		return false
	}
	if got.Kind == Number {
		return Equal(want, got)
	}
	if got.Kind != want.Kind {
		return false
	}
	switch want.Kind {
	case Nil:
		return true
	case Bool:
		return got.Bool == want.Bool
	case Int:
		return got.Neg == want.Neg && got.I == want.I && got.U == want.U
	case Float32, Float64:
		return sameFloat(got.F, want.F)
	case Str, Bin:
		return string(got.Bytes) == string(want.Bytes)
	case Ext:
		return got.Ext == want.Ext && string(got.Bytes) == string(want.Bytes)
	case Timestamp:
		return got.Sec == want.Sec && got.Nsec == want.Nsec
	case Array, Map:
		if len(got.Items) != len(want.Items) {
			return false
		}
		for i := range want.Items {
			if !Equal(got.Items[i], want.Items[i]) {
				return false
			}
		}
		return true
	}
	return false
}

func sameFloat(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return a == b && math.Signbit(a) == math.Signbit(b)
}

func (v Value) toFloat() float64 {
	if v.Neg {
		return float64(v.I)
	}
	return float64(v.U)
}

// IntValue makes an Int from its sign and parts.
func IntValue(neg bool, i int64, u uint64) Value {
	if neg {
		return Value{Kind: Int, Neg: true, I: i}
	}
	return Value{Kind: Int, U: u}
}

// parseInt reads a decimal integer in -2^63 .. 2^64-1.
func parseInt(s string) (Value, bool) {
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return Value{Kind: Int, U: u}, true
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		if i >= 0 {
			return Value{Kind: Int, U: uint64(i)}, true
		}
		return Value{Kind: Int, Neg: true, I: i}, true
	}
	return Value{}, false
}

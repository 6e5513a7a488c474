package mpk

// Head bytes of the MessagePack format.
const (
	mNil      = 0xc0
	mInvalid  = 0xc1
	mFalse    = 0xc2
	mTrue     = 0xc3
	mBin8     = 0xc4
	mBin16    = 0xc5
	mBin32    = 0xc6
	mExt8     = 0xc7
	mExt16    = 0xc8
	mExt32    = 0xc9
	mFloat32  = 0xca
	mFloat64  = 0xcb
	mUint8    = 0xcc
	mUint16   = 0xcd
	mUint32   = 0xce
	mUint64   = 0xcf
	mInt8     = 0xd0
	mInt16    = 0xd1
	mInt32    = 0xd2
	mInt64    = 0xd3
	mFixExt1  = 0xd4
	mFixExt2  = 0xd5
	mFixExt4  = 0xd6
	mFixExt8  = 0xd7
	mFixExt16 = 0xd8
	mStr8     = 0xd9
	mStr16    = 0xda
	mStr32    = 0xdb
	mArray16  = 0xdc
	mArray32  = 0xdd
	mMap16    = 0xde
	mMap32    = 0xdf
)

// TimestampExt is the ext type MessagePack reserves for timestamps.
const TimestampExt = -1

// Type is the family of a MessagePack value, as told by its head byte.
type Type uint8

// The families NextType reports.
const (
	InvalidType Type = iota // no bytes, or the head byte 0xc1
	NilType
	BoolType
	IntType // an int of any width; its value may still need a uint64
	Float32Type
	Float64Type
	StrType
	BinType
	ArrayType
	MapType
	ExtType // any ext, timestamps included
)

var typeNames = [...]string{"invalid", "nil", "bool", "int", "float32", "float64", "str", "bin", "array", "map", "ext"}

func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "invalid"
}

// headType maps every head byte to its family.
var headType = func() (t [256]Type) {
	for c := 0; c < 256; c++ {
		switch {
		case c <= 0x7f || c >= 0xe0:
			t[c] = IntType
		case c <= 0x8f:
			t[c] = MapType
		case c <= 0x9f:
			t[c] = ArrayType
		case c <= 0xbf:
			t[c] = StrType
		}
	}
	t[mNil] = NilType
	t[mInvalid] = InvalidType
	t[mFalse], t[mTrue] = BoolType, BoolType
	t[mBin8], t[mBin16], t[mBin32] = BinType, BinType, BinType
	for _, c := range []int{mExt8, mExt16, mExt32, mFixExt1, mFixExt2, mFixExt4, mFixExt8, mFixExt16} {
		t[c] = ExtType
	}
	t[mFloat32], t[mFloat64] = Float32Type, Float64Type
	for c := mUint8; c <= mInt64; c++ {
		t[c] = IntType
	}
	t[mStr8], t[mStr16], t[mStr32] = StrType, StrType, StrType
	t[mArray16], t[mArray32] = ArrayType, ArrayType
	t[mMap16], t[mMap32] = MapType, MapType
	return
}()

// NextType returns the family of the value at the start of b, without checking the rest of it.
func NextType(b []byte) Type {
	if len(b) == 0 {
		return InvalidType
	}
	return headType[b[0]]
}

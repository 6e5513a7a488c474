package mpk

import (
	"reflect"
	"strconv"
)

// Kind is the cause of a DecodeError. The set is closed and spelled as in spec/README.md.
type Kind uint8

const (
	// Truncated: the input ends inside a value, or a declared length does not fit in the bytes left.
	Truncated Kind = iota + 1
	// InvalidByte: the head byte 0xc1, which MessagePack never uses.
	InvalidByte
	// DepthLimit: an array or map would nest deeper than Limits.Depth.
	DepthLimit
	// LengthLimit: a str/bin/ext length or an array/map count is over its limit.
	LengthLimit
	// InvalidTimestamp: an ext of type -1 whose length is not 4, 8 or 12, or whose nsec > 999999999.
	InvalidTimestamp
	// InvalidUTF8: in strict UTF-8 mode, a str that is not valid UTF-8.
	InvalidUTF8
	// TrailingBytes: one value was decoded and bytes remain.
	TrailingBytes
)

var kindNames = [...]string{
	Truncated:        "truncated",
	InvalidByte:      "invalid_byte",
	DepthLimit:       "depth_limit",
	LengthLimit:      "length_limit",
	InvalidTimestamp: "invalid_timestamp",
	InvalidUTF8:      "invalid_utf8",
	TrailingBytes:    "trailing_bytes",
}

var kindMessages = [...]string{
	Truncated:        "input ends inside a value",
	InvalidByte:      "invalid head byte 0xc1",
	DepthLimit:       "nesting over the depth limit",
	LengthLimit:      "length over its limit",
	InvalidTimestamp: "invalid timestamp",
	InvalidUTF8:      "invalid UTF-8 in str",
	TrailingBytes:    "bytes after the value",
}

// String returns the kind's spelling in spec/README.md, such as "truncated".
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// ParseKind returns the Kind spelled s as in spec/README.md, and false if there is none.
func ParseKind(s string) (Kind, bool) {
	for k, name := range kindNames {
		if name != "" && name == s {
			return Kind(k), true
		}
	}
	return 0, false
}

// A DecodeError reports malformed input: what broke (Kind) and where (Offset, the byte offset from
// the start of the input, as spec/README.md defines it for each kind).
type DecodeError struct {
	Kind   Kind
	Offset int64
}

func (e *DecodeError) Error() string {
	msg := "?"
	if int(e.Kind) < len(kindMessages) {
		msg = kindMessages[e.Kind]
	}
	return "mpk: " + msg + " (" + e.Kind.String() + ") at byte " + strconv.FormatInt(e.Offset, 10)
}

// An UnmarshalTypeError describes a MessagePack value that does not fit the Go type it is decoded
// into (a str into an int, 300 into an int8, ...). Decoding goes on after it, so a later
// DecodeError still wins; the first UnmarshalTypeError is returned when nothing else went wrong.
type UnmarshalTypeError struct {
	Value  string       // the MessagePack family: "str", "int 300", "array", ...
	Type   reflect.Type // the Go type it could not be stored in
	Offset int64        // the value's head byte
	Field  string       // the dotted Go field path, when inside a struct
}

func (e *UnmarshalTypeError) Error() string {
	where := ""
	if e.Field != "" {
		where = " (field " + e.Field + ")"
	}
	return "mpk: cannot decode " + e.Value + " into Go value of type " + e.Type.String() + where +
		" at byte " + strconv.FormatInt(e.Offset, 10)
}

// An InvalidUnmarshalError describes an invalid argument to Unmarshal or Decode: it must be a
// non-nil pointer.
type InvalidUnmarshalError struct {
	Type reflect.Type
}

func (e *InvalidUnmarshalError) Error() string {
	if e.Type == nil {
		return "mpk: Unmarshal(nil)"
	}
	if e.Type.Kind() != reflect.Pointer {
		return "mpk: Unmarshal(non-pointer " + e.Type.String() + ")"
	}
	return "mpk: Unmarshal(nil " + e.Type.String() + ")"
}

// An UnsupportedTypeError is returned by Marshal for a value it cannot encode (a channel, a func,
// a complex number, ...), and by Marshal and Unmarshal for a struct with only unexported fields
// and no way to encode itself (Reason says so).
type UnsupportedTypeError struct {
	Type   reflect.Type
	Reason string // empty, or why
	// Path says where Marshal met the value: "$" is the value given to Marshal, then one step
	// per level — ".Field" for a struct field (its Go name), "[3]" for an element, `["key"]` for
	// the value of a map key, and " (a map key)" after the step of a key that is itself refused:
	// `$.Items[2].Attrs["color"]`. Empty from Unmarshal.
	Path string
}

func (e *UnsupportedTypeError) Error() string {
	if e.Reason != "" {
		return "mpk: unsupported type " + e.Type.String() + pathSuffix(e.Path) + ": " + e.Reason
	}
	return "mpk: unsupported type: " + e.Type.String() + pathSuffix(e.Path)
}

const opaqueReason = "a struct with only unexported fields would travel as an empty map; implement " +
	"Marshaler/Unmarshaler, encoding.BinaryMarshaler or encoding.TextMarshaler, or use RegisterCodec"

// An InvalidTimestampError is returned by Marshal for a Timestamp whose Nsec is over 999999999:
// no timestamp ext can carry it (a decoder reports such an ext as InvalidTimestamp, the spec's
// invalid_timestamp).
type InvalidTimestampError struct {
	Sec  int64
	Nsec uint32
	Path string // where Marshal met it (see UnsupportedTypeError.Path); empty elsewhere
}

func (e *InvalidTimestampError) Error() string {
	return "mpk: invalid timestamp: nsec " + strconv.FormatUint(uint64(e.Nsec), 10) + " is over 999999999" +
		pathSuffix(e.Path)
}

// A MarshalerError wraps an error returned by a Marshaler or an ext encoder.
type MarshalerError struct {
	Type reflect.Type
	Err  error
	Path string // where Marshal met it (see UnsupportedTypeError.Path)
}

func (e *MarshalerError) Error() string {
	return "mpk: error calling MarshalMsgpack for type " + e.Type.String() + pathSuffix(e.Path) + ": " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *MarshalerError) Unwrap() error { return e.Err }

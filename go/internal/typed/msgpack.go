package typed

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"unicode/utf8"

	"mpk.dev/go/mpk"
)

// ErrNsecRange is Encode's refusal of a timestamp whose nsec does not even fit mpk.Timestamp's
// uint32 (an nsec within it but over 999999999 is refused by mpk itself).
var ErrNsecRange = errors.New("typed: timestamp nsec outside 0..4294967295")

// EncodeErrorKind is the spec's kind for an error of Encode: invalid_timestamp for a timestamp
// mpk refuses, bad_request for anything else.
func EncodeErrorKind(err error) string {
	var te *mpk.InvalidTimestampError
	if errors.As(err, &te) || errors.Is(err, ErrNsecRange) {
		return "invalid_timestamp"
	}
	return "bad_request"
}

// Encode appends v in shortest form through mpk's Append functions (timestamps through
// mpk.MarshalAppend, which refuses an nsec over 999999999). A loose number that is an int is
// written as an int, any other as a float 64.
func Encode(b []byte, v Value) ([]byte, error) {
	switch v.Kind {
	case Nil:
		return mpk.AppendNil(b), nil
	case Bool:
		return mpk.AppendBool(b, v.Bool), nil
	case Int:
		if v.Neg {
			return mpk.AppendInt(b, v.I), nil
		}
		return mpk.AppendUint(b, v.U), nil
	case Number:
		if v.IsInt {
			return Encode(b, IntValue(v.Neg, v.I, v.U))
		}
		return mpk.AppendFloat64(b, v.F), nil
	case Float32:
		if math.IsNaN(v.F) {
			return mpk.AppendFloat32(b, math.Float32frombits(0x7fc00000)), nil
		}
		return mpk.AppendFloat32(b, float32(v.F)), nil
	case Float64:
		return mpk.AppendFloat64(b, v.F), nil
	case Str:
		return mpk.AppendStringBytes(b, v.Bytes), nil
	case Bin:
		return mpk.AppendBytes(b, v.Bytes), nil
	case Array:
		b = mpk.AppendArrayHeader(b, uint32(len(v.Items)))
		return encodeItems(b, v.Items)
	case Map:
		b = mpk.AppendMapHeader(b, uint32(len(v.Items)/2))
		return encodeItems(b, v.Items)
	case Ext:
		return mpk.AppendExt(b, v.Ext, v.Bytes), nil
	case Timestamp:
		if v.Nsec < 0 || v.Nsec > math.MaxUint32 {
			return b, ErrNsecRange
		}
		return mpk.MarshalAppend(b, mpk.Timestamp{Sec: v.Sec, Nsec: uint32(v.Nsec)})
	}
	panic("typed: unknown kind")
}

func encodeItems(b []byte, items []Value) ([]byte, error) {
	var err error
	for _, item := range items {
		if b, err = Encode(b, item); err != nil {
			return b, err
		}
	}
	return b, nil
}

// Decode reads one value from the start of b through mpk's Read functions and returns it with
// the rest of b. The input should be checked first (Unmarshal into a RawMessage checks limits
// and depth); Decode itself only relies on the Read functions' checks.
func Decode(b []byte) (Value, []byte, error) {
	switch mpk.NextType(b) {
	case mpk.NilType:
		rest, err := mpk.ReadNil(b)
		return Value{Kind: Nil}, rest, err
	case mpk.BoolType:
		x, rest, err := mpk.ReadBool(b)
		return Value{Kind: Bool, Bool: x}, rest, err
	case mpk.IntType:
		if i, rest, err := mpk.ReadInt(b); err == nil {
			if i < 0 {
				return Value{Kind: Int, Neg: true, I: i}, rest, nil
			}
			return Value{Kind: Int, U: uint64(i)}, rest, nil
		}
		u, rest, err := mpk.ReadUint(b)
		return Value{Kind: Int, U: u}, rest, err
	case mpk.Float32Type:
		f, rest, err := mpk.ReadFloat32(b)
		return Value{Kind: Float32, F: float64(f)}, rest, err
	case mpk.Float64Type:
		f, rest, err := mpk.ReadFloat64(b)
		return Value{Kind: Float64, F: f}, rest, err
	case mpk.StrType:
		s, rest, err := mpk.ReadStringBytes(b)
		return Value{Kind: Str, Bytes: append([]byte{}, s...)}, rest, err
	case mpk.BinType:
		s, rest, err := mpk.ReadBytes(b)
		return Value{Kind: Bin, Bytes: append([]byte{}, s...)}, rest, err
	case mpk.ArrayType:
		n, rest, err := mpk.ReadArrayHeader(b)
		if err != nil {
			return Value{}, b, err
		}
		v := Value{Kind: Array, Items: make([]Value, n)}
		for i := range v.Items {
			if v.Items[i], rest, err = Decode(rest); err != nil {
				return Value{}, b, err
			}
		}
		return v, rest, nil
	case mpk.MapType:
		n, rest, err := mpk.ReadMapHeader(b)
		if err != nil {
			return Value{}, b, err
		}
		v := Value{Kind: Map, Items: make([]Value, 2*n)}
		for i := range v.Items {
			if v.Items[i], rest, err = Decode(rest); err != nil {
				return Value{}, b, err
			}
		}
		return v, rest, nil
	case mpk.ExtType:
		typ, data, rest, err := mpk.ReadExt(b)
		if err != nil {
			return Value{}, b, err
		}
		if typ == mpk.TimestampExt {
			sec, nsec, rest, err := mpk.ReadTimestamp(b)
			return Value{Kind: Timestamp, Sec: sec, Nsec: int64(nsec)}, rest, err
		}
		return Value{Kind: Ext, Ext: typ, Bytes: append([]byte{}, data...)}, rest, nil
	}
	_, err := mpk.Skip(b) // reports the error for an empty input or 0xc1
	if err == nil {
		err = errors.New("typed: unknown head byte")
	}
	return Value{}, b, err
}

// Canonical writes v in the canonical (driver output) form of spec/README.md.
func Canonical(w *bytes.Buffer, v Value) {
	switch v.Kind {
	case Nil:
		w.WriteString(`{"nil":null}`)
	case Bool:
		w.WriteString(`{"bool":` + strconv.FormatBool(v.Bool) + `}`)
	case Int, Number:
		if v.Kind == Number && !v.IsInt {
			w.WriteString(`{"float64":` + floatJSON(v.F, 64) + `}`)
			return
		}
		w.WriteString(`{"int":` + intJSON(v.Neg, v.I, v.U) + `}`)
	case Float32:
		w.WriteString(`{"float32":` + floatJSON(v.F, 32) + `}`)
	case Float64:
		w.WriteString(`{"float64":` + floatJSON(v.F, 64) + `}`)
	case Str:
		if utf8.Valid(v.Bytes) {
			s, _ := json.Marshal(string(v.Bytes))
			w.WriteString(`{"string":` + string(s) + `}`)
		} else {
			w.WriteString(`{"string_hex":"` + hex.EncodeToString(v.Bytes) + `"}`)
		}
	case Bin:
		w.WriteString(`{"binary":"` + hex.EncodeToString(v.Bytes) + `"}`)
	case Array:
		w.WriteString(`{"typed_array":[`)
		for i, item := range v.Items {
			if i > 0 {
				w.WriteByte(',')
			}
			Canonical(w, item)
		}
		w.WriteString(`]}`)
	case Map:
		w.WriteString(`{"typed_map":[`)
		for i := 0; i+1 < len(v.Items); i += 2 {
			if i > 0 {
				w.WriteByte(',')
			}
			w.WriteByte('[')
			Canonical(w, v.Items[i])
			w.WriteByte(',')
			Canonical(w, v.Items[i+1])
			w.WriteByte(']')
		}
		w.WriteString(`]}`)
	case Ext:
		w.WriteString(`{"ext":[` + strconv.Itoa(int(v.Ext)) + `,"` + hex.EncodeToString(v.Bytes) + `"]}`)
	case Timestamp:
		w.WriteString(`{"timestamp":[` + intJSON(v.Sec < 0, v.Sec, uint64(v.Sec)) + `,` +
			strconv.FormatInt(v.Nsec, 10) + `]}`)
	}
}

const maxSafe = 1<<53 - 1

// intJSON writes an int as a JSON number when JavaScript can hold it, else as a decimal string.
func intJSON(neg bool, i int64, u uint64) string {
	if neg {
		if i >= -maxSafe {
			return strconv.FormatInt(i, 10)
		}
		return `"` + strconv.FormatInt(i, 10) + `"`
	}
	if u <= maxSafe {
		return strconv.FormatUint(u, 10)
	}
	return `"` + strconv.FormatUint(u, 10) + `"`
}

// floatJSON writes the shortest decimal that reads back as the same binary64 value, always with
// a fraction or an exponent so that -0.0 and 1.0 stay floats.
func floatJSON(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return `"NaN"`
	case math.IsInf(f, 1):
		return `"Infinity"`
	case math.IsInf(f, -1):
		return `"-Infinity"`
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !bytes.ContainsAny([]byte(s), ".e") {
		s += ".0"
	}
	_ = bits
	return s
}

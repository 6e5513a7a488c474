package typed

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Keys lists the typed-value keys of spec/README.md.
var Keys = map[string]bool{
	"nil": true, "bool": true, "number": true, "bignum": true, "string": true, "binary": true,
	"array": true, "map": true, "ext": true, "timestamp": true, "int": true, "float32": true,
	"float64": true, "string_hex": true, "typed_array": true, "typed_map": true,
}

// Parse reads one typed value ({"key": member}) from dec, which must have UseNumber set. Object
// members are read as tokens, so a map keeps its keys' order.
func Parse(dec *json.Decoder) (Value, error) {
	if err := expectDelim(dec, '{'); err != nil {
		return Value{}, err
	}
	tk, err := dec.Token()
	if err != nil {
		return Value{}, err
	}
	key, ok := tk.(string)
	if !ok {
		return Value{}, errors.New("typed value: expected a key")
	}
	v, err := ParseMember(dec, key)
	if err != nil {
		return Value{}, err
	}
	return v, expectDelim(dec, '}')
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tk, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tk.(json.Delim); !ok || d != want {
		return fmt.Errorf("typed value: expected %v, got %v", want, tk)
	}
	return nil
}

// ParseMember reads the member of a typed value whose key has been read.
func ParseMember(dec *json.Decoder, key string) (Value, error) {
	switch key {
	case "array", "map":
		v, err := parsePlain(dec)
		if err != nil {
			return v, err
		}
		if (key == "array") != (v.Kind == Array) || (key == "map") != (v.Kind == Map) {
			return v, errors.New("typed value: " + key + " member of the wrong JSON type")
		}
		return v, nil
	case "typed_array":
		if err := expectDelim(dec, '['); err != nil {
			return Value{}, err
		}
		v := Value{Kind: Array, Items: []Value{}}
		for dec.More() {
			item, err := Parse(dec)
			if err != nil {
				return v, err
			}
			v.Items = append(v.Items, item)
		}
		return v, expectDelim(dec, ']')
	case "typed_map":
		if err := expectDelim(dec, '['); err != nil {
			return Value{}, err
		}
		v := Value{Kind: Map, Items: []Value{}}
		for dec.More() {
			if err := expectDelim(dec, '['); err != nil {
				return v, err
			}
			k, err := Parse(dec)
			if err != nil {
				return v, err
			}
			val, err := Parse(dec)
			if err != nil {
				return v, err
			}
			v.Items = append(v.Items, k, val)
			if err := expectDelim(dec, ']'); err != nil {
				return v, err
			}
		}
		return v, expectDelim(dec, ']')
	case "ext", "timestamp":
		if err := expectDelim(dec, '['); err != nil {
			return Value{}, err
		}
		a, err := scalar(dec)
		if err != nil {
			return Value{}, err
		}
		b, err := scalar(dec)
		if err != nil {
			return Value{}, err
		}
		if err := expectDelim(dec, ']'); err != nil {
			return Value{}, err
		}
		return extMember(key, a, b)
	}
	x, err := scalar(dec)
	if err != nil {
		return Value{}, err
	}
	return scalarMember(key, x)
}

func scalar(dec *json.Decoder) (any, error) {
	tk, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if _, ok := tk.(json.Delim); ok {
		return nil, errors.New("typed value: expected a scalar")
	}
	return tk, nil
}

func extMember(key string, a, b any) (Value, error) {
	if key == "ext" {
		n, ok := a.(json.Number)
		s, ok2 := b.(string)
		if !ok || !ok2 {
			return Value{}, errors.New("ext: expected [type, hex]")
		}
		t, err := strconv.ParseInt(string(n), 10, 8)
		if err != nil {
			return Value{}, fmt.Errorf("ext type: %v", err)
		}
		data, err := parseHex(s)
		if err != nil {
			return Value{}, err
		}
		return Value{Kind: Ext, Ext: int8(t), Bytes: data}, nil
	}
	sec, ok := intOf(a)
	if !ok || sec.Kind != Int || (!sec.Neg && sec.U > math.MaxInt64) {
		return Value{}, errors.New("timestamp: bad sec")
	}
	nsec, ok := nsecOf(b)
	if !ok {
		return Value{}, errors.New("timestamp: bad nsec")
	}
	s := sec.I
	if !sec.Neg {
		s = int64(sec.U)
	}
	return Value{Kind: Timestamp, Sec: s, Nsec: nsec}, nil
}

// nsecOf reads a timestamp's nsec, any integer: one beyond int64 becomes the nearest int64, which
// is as far outside 0..999999999 and is refused the same way when encoded.
func nsecOf(x any) (int64, bool) {
	if v, ok := intOf(x); ok {
		if v.Neg {
			return v.I, true
		}
		return int64(min(v.U, math.MaxInt64)), true
	}
	var s string
	switch x := x.(type) {
	case json.Number:
		s = string(x)
	case string:
		s = x
	default:
		return 0, false
	}
	_, err := strconv.ParseInt(s, 10, 64)
	if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
		return 0, false // not an integer at all
	}
	if strings.HasPrefix(s, "-") {
		return math.MinInt64, true
	}
	return math.MaxInt64, true
}

// intOf reads a JSON integer or a decimal string.
func intOf(x any) (Value, bool) {
	switch x := x.(type) {
	case json.Number:
		return parseInt(string(x))
	case string:
		return parseInt(x)
	}
	return Value{}, false
}

func scalarMember(key string, x any) (Value, error) {
	bad := func() (Value, error) { return Value{}, fmt.Errorf("typed value: bad %s member %v", key, x) }
	switch key {
	case "nil":
		if x != nil {
			return bad()
		}
		return Value{Kind: Nil}, nil
	case "bool":
		b, ok := x.(bool)
		if !ok {
			return bad()
		}
		return Value{Kind: Bool, Bool: b}, nil
	case "number":
		n, ok := x.(json.Number)
		if !ok {
			return bad()
		}
		return looseNumber(string(n))
	case "int", "bignum":
		v, ok := intOf(x)
		if !ok {
			return bad()
		}
		return v, nil
	case "float32", "float64":
		var f float64
		switch x := x.(type) {
		case json.Number:
			var err error
			if f, err = strconv.ParseFloat(string(x), 64); err != nil {
				return bad()
			}
		case string:
			switch x {
			case "NaN":
				f = math.Float64frombits(0x7ff8000000000000) // the quiet NaN of the corpus
			case "Infinity":
				f = math.Inf(1)
			case "-Infinity":
				f = math.Inf(-1)
			default:
				return bad()
			}
		default:
			return bad()
		}
		if key == "float32" {
			return Value{Kind: Float32, F: f}, nil
		}
		return Value{Kind: Float64, F: f}, nil
	case "string":
		s, ok := x.(string)
		if !ok {
			return bad()
		}
		return Value{Kind: Str, Bytes: []byte(s)}, nil
	case "string_hex", "binary":
		s, ok := x.(string)
		if !ok {
			return bad()
		}
		b, err := parseHex(s)
		if err != nil {
			return Value{}, err
		}
		if key == "binary" {
			return Value{Kind: Bin, Bytes: b}, nil
		}
		return Value{Kind: Str, Bytes: b}, nil
	}
	return Value{}, errors.New("typed value: unknown key " + strconv.Quote(key))
}

// looseNumber reads the `number` member: an int when written without fraction or exponent.
func looseNumber(s string) (Value, error) {
	if !strings.ContainsAny(s, ".eE") {
		if v, ok := parseInt(s); ok {
			return Value{Kind: Number, IsInt: true, Neg: v.Neg, I: v.I, U: v.U}, nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return Value{}, err
	}
	return Value{Kind: Number, F: f}, nil
}

// ParseHex reads hex bytes, optionally separated by '-'.
func parseHex(s string) ([]byte, error) {
	return hex.DecodeString(strings.ReplaceAll(s, "-", ""))
}

// ParseHex reads hex bytes, optionally separated by '-'.
func ParseHex(s string) ([]byte, error) { return parseHex(s) }

// parsePlain reads plain JSON (inside `array` and `map`).
func parsePlain(dec *json.Decoder) (Value, error) {
	tk, err := dec.Token()
	if err != nil {
		return Value{}, err
	}
	switch x := tk.(type) {
	case nil:
		return Value{Kind: Nil}, nil
	case bool:
		return Value{Kind: Bool, Bool: x}, nil
	case json.Number:
		return looseNumber(string(x))
	case string:
		return Value{Kind: Str, Bytes: []byte(x)}, nil
	case json.Delim:
		switch x {
		case '[':
			v := Value{Kind: Array, Items: []Value{}}
			for dec.More() {
				item, err := parsePlain(dec)
				if err != nil {
					return v, err
				}
				v.Items = append(v.Items, item)
			}
			return v, expectDelim(dec, ']')
		case '{':
			v := Value{Kind: Map, Items: []Value{}}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return v, err
				}
				val, err := parsePlain(dec)
				if err != nil {
					return v, err
				}
				v.Items = append(v.Items, Value{Kind: Str, Bytes: []byte(k.(string))}, val)
			}
			return v, expectDelim(dec, '}')
		}
	}
	return Value{}, fmt.Errorf("plain JSON: unexpected %v", tk)
}

package bench

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
)

// sameValue reports whether two decoded `any` trees hold the same value, whatever Go types each
// library chose: maps with string or any keys, ints of any width or float64 holding an integer,
// []byte against a string of the same bytes, or against base64 text (encoding/json's bins). It
// replaces a comparison through JSON text, which took most of the bench's set-up time on the
// megabyte documents.
func sameValue(a, b any) bool {
	if x, ok := num(a); ok {
		y, ok := num(b)
		return ok && (x == y || (math.IsNaN(x) && math.IsNaN(y)))
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		switch y := b.(type) {
		case string:
			return x == y
		case []byte:
			return x == string(y) || x == base64.StdEncoding.EncodeToString(y)
		}
		return false
	case []byte:
		switch y := b.(type) {
		case []byte:
			return string(x) == string(y)
		case string:
			return sameValue(y, x)
		}
		return false
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		return sameMap(x, b)
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, v := range x {
			m[fmt.Sprint(k)] = v
		}
		return sameMap(m, b)
	}
	return reflect.DeepEqual(a, b)
}

func sameMap(x map[string]any, b any) bool {
	switch y := b.(type) {
	case map[string]any:
		if len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !sameValue(v, w) {
				return false
			}
		}
		return true
	case map[any]any:
		return sameValue(y, x)
	}
	return false
}

func num(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint8:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float32:
		return float64(x), true
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

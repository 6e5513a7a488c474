package mpk

import (
	"errors"
	"fmt"
)

// ErrNotFound is what Lookup's error wraps when a step of the path names no value: a map key
// that is not there, an array index past the end, or a step into a value that is not a map or
// an array.
var ErrNotFound = errors.New("mpk: not found")

// Lookup returns the encoding of the value at path inside the MessagePack value b, without
// decoding anything else: the values before and around it are checked and skipped (as Skip
// does, with the default limits), not built. Each step of path is a string, which names the
// pair of a map whose key is that str, or an int, which is an index into an array or names
// the pair of a map whose key is that integer. With duplicate keys the last pair wins, as when
// decoding. The result is a sub-slice of b (no copy): Unmarshal it, or read it with the Read
// functions. With no path, Lookup returns b's first value.
//
// Errors: a step that names no value is an error wrapping ErrNotFound that names the step; a
// step of another type than string or int is an error too; malformed or truncated bytes met on
// the way are a *DecodeError whose Offset counts from the start of b. Only the parts of b that
// the walk passes over are checked: bytes after the value found are not looked at.
func Lookup(b []byte, path ...any) (RawMessage, error) {
	cur := b // the value the next step goes into
	for i, step := range path {
		base := len(b) - len(cur)
		switch c := cur; {
		case len(c) > 0 && (c[0]&0xf0 == 0x80 || c[0] == mMap16 || c[0] == mMap32):
			v, err := lookupKey(c, step)
			if err != nil {
				return nil, lookupError(err, base, path[:i+1])
			}
			cur = v
		case len(c) > 0 && (c[0]&0xf0 == 0x90 || c[0] == mArray16 || c[0] == mArray32):
			idx, ok := step.(int)
			if !ok {
				return nil, lookupError(fmt.Errorf("%w: an array has no key %v", ErrNotFound, step), base, path[:i+1])
			}
			n, rest, err := ReadArrayHeader(c)
			if err != nil {
				return nil, lookupError(err, base, path[:i+1])
			}
			if idx < 0 || idx >= n {
				return nil, lookupError(fmt.Errorf("%w: index %d of an array of %d", ErrNotFound, idx, n), base, path[:i+1])
			}
			for ; idx > 0; idx-- {
				if rest, err = Skip(rest); err != nil {
					return nil, lookupError(err, len(c)-len(rest)+0, path[:i+1], base)
				}
			}
			cur = rest
		default:
			if _, err := Skip(c); err != nil {
				return nil, lookupError(err, base, path[:i+1])
			}
			return nil, lookupError(fmt.Errorf("%w: %s is not a map or an array", ErrNotFound, describeHead(c)), base, path[:i+1])
		}
	}
	rest, err := Skip(cur)
	if err != nil {
		return nil, lookupError(err, len(b)-len(cur), path)
	}
	return RawMessage(cur[:len(cur)-len(rest)]), nil
}

// lookupKey finds step's pair in the map at the start of c and returns its value and what
// follows (the last pair with that key).
func lookupKey(c []byte, step any) ([]byte, error) {
	switch step.(type) {
	case string, int:
	default:
		return nil, fmt.Errorf("a path step must be a string or an int, not %T", step)
	}
	n, rest, err := ReadMapHeader(c)
	if err != nil {
		return nil, err
	}
	var found []byte
	for ; n > 0; n-- {
		match := false
		switch k := step.(type) {
		case string:
			if s, r, err := ReadStringBytes(rest); err == nil {
				match, rest = string(s) == k, r
			} else if rest, err = Skip(rest); err != nil {
				return nil, offsetBy(err, len(c)-len(rest))
			}
		case int:
			if v, r, err := ReadInt(rest); err == nil {
				match, rest = v == int64(k), r
			} else if rest, err = Skip(rest); err != nil {
				return nil, offsetBy(err, len(c)-len(rest))
			}
		}
		if match {
			found = rest
		}
		if rest, err = Skip(rest); err != nil {
			return nil, offsetBy(err, len(c)-len(rest))
		}
	}
	if found == nil {
		return nil, fmt.Errorf("%w: no key %#v", ErrNotFound, step)
	}
	return found, nil
}

// offsetBy moves a *DecodeError's offset on by n bytes (an error of a Read function counts from
// the slice it was given).
func offsetBy(err error, n int) error {
	var de *DecodeError
	if errors.As(err, &de) {
		cp := *de
		cp.Offset += int64(n)
		return &cp
	}
	return err
}

// lookupError places err at the step path of a lookup whose current value starts at base
// (plus extra, when given).
func lookupError(err error, base int, path []any, extra ...int) error {
	for _, e := range extra {
		base += e
	}
	var de *DecodeError
	if errors.As(err, &de) {
		return offsetBy(err, base)
	}
	return fmt.Errorf("mpk: Lookup %v: %w", path, err)
}

// describeHead names the type of the value at the start of c, for errors.
func describeHead(c []byte) string {
	if len(c) == 0 {
		return "nothing"
	}
	if t, _, err := readOne(c); err == nil {
		return t.describe()
	}
	return "a malformed value"
}

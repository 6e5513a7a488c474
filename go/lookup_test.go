package mpk

import (
	"errors"
	"math/rand"
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	doc := map[string]any{
		"user":  map[string]any{"name": "ann", "tags": []any{"a", "b", map[string]any{"deep": int64(7)}}},
		"count": int64(3),
	}
	b, err := EncodeOptions{SortMapKeys: true}.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := Lookup(b, "user", "tags", 2, "deep")
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := Unmarshal(raw, &v); err != nil || v != int64(7) {
		t.Fatalf("deep: %v %v", v, err)
	}
	if raw, err = Lookup(b, "user", "name"); err != nil || string(raw) != "\xa3ann" {
		t.Fatalf("name: % x %v", raw, err)
	}
	if raw, err = Lookup(b); err != nil || len(raw) != len(b) {
		t.Fatalf("no path: %d of %d, %v", len(raw), len(b), err)
	}
	for _, path := range [][]any{{"nope"}, {"user", "tags", 3}, {"user", "tags", -1}, {"count", "x"}, {"user", "tags", "x"}} {
		if _, err := Lookup(b, path...); !errors.Is(err, ErrNotFound) {
			t.Errorf("%v: %v, want ErrNotFound", path, err)
		}
	}
	if _, err := Lookup(b, 1.5); err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "float64") {
		t.Errorf("float step: %v", err)
	}
}

// TestLookupLastDuplicateWins: the last pair with the key, as decoding does; int keys too.
func TestLookupLastDuplicateWins(t *testing.T) {
	b := []byte{0x84, 0xa1, 'a', 0x01, 0x05, 0x06, 0xc0, 0xc0, 0xa1, 'a', 0x02} // {"a":1, 5:6, nil:nil, "a":2}
	if raw, err := Lookup(b, "a"); err != nil || string(raw) != "\x02" {
		t.Fatalf("a: % x %v", raw, err)
	}
	if raw, err := Lookup(b, 5); err != nil || string(raw) != "\x06" {
		t.Fatalf("5: % x %v", raw, err)
	}
}

// TestLookupErrors: malformed and truncated bytes on the way are *DecodeErrors at their offset
// in the whole input; bytes after the value found are not looked at.
func TestLookupErrors(t *testing.T) {
	cases := []struct {
		b      []byte
		path   []any
		kind   Kind
		offset int64
	}{
		{[]byte{0x82, 0xa1, 'x', 0xc1, 0xa1, 'y', 0x01}, []any{"y"}, InvalidByte, 3}, // a reserved byte in a skipped value
		{[]byte{0x93, 0x01, 0x92, 0x01}, []any{2}, Truncated, 2},                     // the skipped [1, ...] is cut short
		{[]byte{0x92, 0x01, 0xd9, 0x05, 'a'}, []any{1}, Truncated, 2},                // the value found is cut short
		{[]byte{0x81, 0xa1, 'k', 0x92, 0xc1, 0x01}, []any{"k", 1}, InvalidByte, 4},   // skipping inside the nested array
	}
	for _, c := range cases {
		_, err := Lookup(c.b, c.path...)
		var de *DecodeError
		if !errors.As(err, &de) || de.Kind != c.kind || de.Offset != c.offset {
			t.Errorf("% x %v: %v, want %v at %d", c.b, c.path, err, c.kind, c.offset)
		}
	}
	// a malformed byte after the value found is not reported
	if raw, err := Lookup([]byte{0x92, 0x01, 0xc1}, 0); err != nil || string(raw) != "\x01" {
		t.Errorf("after: % x %v", raw, err)
	}
}

// TestLookupHostile: random, cut and flipped messages with random paths never panic, and a
// value found is one whole value.
func TestLookupHostile(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for _, m := range smallMessages(r, 2000) {
		path := []any{}
		for i := r.Intn(4); i > 0; i-- {
			if r.Intn(2) == 0 {
				path = append(path, r.Intn(4))
			} else {
				path = append(path, string(rune('a'+r.Intn(3))))
			}
		}
		raw, err := Lookup(m, path...)
		if err == nil {
			if rest, err := Skip(raw); err != nil || len(rest) != 0 {
				t.Fatalf("% x %v: % x is not one value", m, path, raw)
			}
		}
	}
}

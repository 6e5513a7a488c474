package mpk

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// copyCaseSizes are string and bin lengths around the copy paths' edges: the arena (up to
// arenaOwnMin), values of their own, the small-message path's bin8/bin16, a large object.
var copyCaseSizes = []int{0, 1, 31, 32, 33, 100, 255, 256, 511, 512, 513, 4096, 40000}

// copyCaseDoc is a document with a str and a bin of every size of copyCaseSizes, and the values
// Unmarshal into `any` must give back.
func copyCaseDoc(t *testing.T) ([]byte, map[string]any) {
	t.Helper()
	want := map[string]any{}
	for i, n := range copyCaseSizes {
		want[fmt.Sprintf("s%d", n)] = strings.Repeat(string(rune('a'+i%26)), n)
		want[fmt.Sprintf("b%d", n)] = bytes.Repeat([]byte{byte(i + 1)}, n)
	}
	enc, err := Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	return enc, want
}

// withCopyPath runs f with copyBytes' uncleared allocation (the default) and with the portable
// append (copyBytesAppend), restoring the default after.
func withCopyPath(t *testing.T, f func(t *testing.T)) {
	defer func(v bool) { copyNoClear = v }(copyNoClear)
	for _, noClear := range []bool{true, false} {
		copyNoClear = noClear
		t.Run(fmt.Sprintf("noClear=%v", noClear), f)
	}
}

// TestCopyBytesPaths: on both copy paths every decoded str and bin (into `any`, a []byte and a
// string, with and without CopyStrings, through the small-message path and the general one)
// has its value, owns its bytes (overwriting the input changes nothing), and a bin's capacity
// is its length, so that writing into or appending to one decoded bin never changes another
// decoded value.
func TestCopyBytesPaths(t *testing.T) {
	withCopyPath(t, func(t *testing.T) {
		enc, want := copyCaseDoc(t)
		for _, opts := range []DecodeOptions{{}, {CopyStrings: true}} {
			in := bytes.Clone(enc)
			var got any
			if err := opts.Unmarshal(in, &got); err != nil {
				t.Fatal(err)
			}
			clear(in)
			m, ok := got.(map[string]any)
			if !ok || len(m) != len(want) {
				t.Fatalf("%+v: got %T of %d entries", opts, got, len(m))
			}
			for k, w := range want {
				if wb, isBin := w.([]byte); isBin {
					gb, ok := m[k].([]byte)
					if !ok || !bytes.Equal(gb, wb) || cap(gb) != len(gb) {
						t.Fatalf("%+v: %s: got %T len %d cap %d", opts, k, m[k], len(gb), cap(gb))
					}
					continue
				}
				if m[k] != w {
					t.Fatalf("%+v: %s: got %q", opts, k, m[k])
				}
			}
			// a write into every decoded bin changes no other value
			for k, v := range m {
				if b, ok := v.([]byte); ok {
					for i := range b {
						b[i] = 0xee
					}
					m[k] = append(b, 1)
				}
			}
			for k, w := range want {
				if s, ok := w.(string); ok && m[k] != s {
					t.Fatalf("%+v: %s changed to %q after the bins were written", opts, k, m[k])
				}
			}
		}
		// lone values: []byte and string targets, the small-message path (bin8, bin16), a lone bin
		for _, n := range copyCaseSizes {
			bin, _ := Marshal(bytes.Repeat([]byte{9}, n))
			str, _ := Marshal(strings.Repeat("z", n))
			in := bytes.Clone(bin)
			var b []byte
			var x any
			if err := Unmarshal(in, &b); err != nil {
				t.Fatal(err)
			}
			if err := Unmarshal(in, &x); err != nil {
				t.Fatal(err)
			}
			small, _ := Marshal([]any{int64(1), bytes.Repeat([]byte{9}, n)})
			smallIn := bytes.Clone(small)
			var y any
			if err := Unmarshal(smallIn, &y); err != nil {
				t.Fatal(err)
			}
			sIn := bytes.Clone(str)
			var s string
			if err := Unmarshal(sIn, &s); err != nil {
				t.Fatal(err)
			}
			clear(in)
			clear(smallIn)
			clear(sIn)
			xb, _ := x.([]byte)
			yb, _ := y.([]any)[1].([]byte)
			for _, got := range [][]byte{b, xb, yb} {
				if !bytes.Equal(got, bytes.Repeat([]byte{9}, n)) || cap(got) != len(got) {
					t.Fatalf("lone bin of %d: got len %d cap %d", n, len(got), cap(got))
				}
			}
			if s != strings.Repeat("z", n) {
				t.Fatalf("lone str of %d: got %d bytes", n, len(s))
			}
		}
	})
}

// BenchmarkCopyPaths: Unmarshal into `any` of 1000 strings of 0-4 KiB (go/bench's strings4k),
// of strings of 0-1023 bytes (c_strings' lengths) and of one 1 MiB string by each copy path,
// alternating in one process (-count).
func BenchmarkCopyPaths(b *testing.B) {
	strs := make([]any, 1000)
	for i := range strs {
		strs[i] = strings.Repeat("x", (i*4099)%4097)
	}
	short := make([]any, 1024)
	for i := range short {
		short[i] = strings.Repeat("y", i)
	}
	for _, doc := range []struct {
		name string
		v    any
	}{{"strings4k", strs}, {"strings1k", short}, {"long_string", strings.Repeat("z", 1<<20)}} {
		enc, err := Marshal(doc.v)
		if err != nil {
			b.Fatal(err)
		}
		for _, noClear := range []bool{true, false} {
			b.Run(fmt.Sprintf("%s/noClear=%v", doc.name, noClear), func(b *testing.B) {
				defer func(v bool) { copyNoClear = v }(copyNoClear)
				copyNoClear = noClear
				b.SetBytes(int64(len(enc)))
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					var x any
					if err := Unmarshal(enc, &x); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

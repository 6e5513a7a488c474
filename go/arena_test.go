package mpk

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"testing"
)

// TestArenaChunkNotDoubleCounted: a str or bin that starts a new arena chunk gets a chunk sized
// for itself and the input after it, not for itself twice. Decoding one 200-byte bin or str
// allocated a 400-byte chunk on the paths that read the head before copying (a []byte, a bin
// into `any` by the general decoder, a str under StrictUTF8).
func TestArenaChunkNotDoubleCounted(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under the race detector include its own")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // keep the pooled decode state
	const n = 200
	bin := append([]byte{0xc4, n}, bytes.Repeat([]byte{7}, n)...)
	str := append([]byte{0xd9, n}, bytes.Repeat([]byte("s"), n)...)
	cases := []struct {
		name string
		dec  func() error
	}{
		{"bin into []byte", func() error { var x []byte; return Unmarshal(bin, &x) }},
		{"bin into any", func() error { var x any; return DecodeOptions{}.Unmarshal(bin, &x) }},
		{"strict str into string", func() error { var x string; return DecodeOptions{StrictUTF8: true}.Unmarshal(str, &x) }},
	}
	for _, c := range cases {
		if err := c.dec(); err != nil {
			t.Fatal(err)
		}
		const runs = 100
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := 0; i < runs; i++ {
			if err := c.dec(); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		per := (after.TotalAlloc - before.TotalAlloc) / runs
		// the copy (208 bytes with its size class) and the destination; twice n is over this
		if per > n*3/2 {
			t.Errorf("%s: %d bytes allocated per decode of a %d-byte value", c.name, per, n)
		}
	}
}

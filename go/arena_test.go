package mpk

import (
	"bytes"
	"encoding/hex"
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

// TestSmallDocumentBytes pins the bytes Unmarshal into `any` allocates for a document like
// go/bench's rb_image (a map of 7 keys: 3 short strings and 4 numbers beside a 6 KiB bin): the
// first arena copy (arenaFirst) and the first box chunk (boxChunkFirst) are sized for a few
// values. With a 512-byte first copy and 16-slot chunks it took 7,480 bytes a decode against
// tinylib/msgp's 6,696; it takes 7,032.
func TestSmallDocumentBytes(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under the race detector include its own")
	}
	// {"id": 42, "name": "photo.jpg", "width": 640, "height": 480, "tags": ["cat", "sofa"],
	// "created": 1700000000, "data": bin of 6144 bytes}, in that order (rb_image's)
	enc, err := hex.DecodeString("87a269642aa46e616d65a970686f746f2e6a7067a57769647468cd0280" +
		"a6686569676874cd01e0a47461677392a3636174a4736f6661a763726561746564ce6553f100a464617461c51800")
	if err != nil {
		t.Fatal(err)
	}
	enc = append(enc, bytes.Repeat([]byte{7}, 6144)...)
	decode := func() {
		var x any
		if err := Unmarshal(enc, &x); err != nil {
			t.Fatal(err)
		}
	}
	decode() // the pooled state and its key cache
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	const n = 100
	for i := 0; i < n; i++ {
		decode()
	}
	runtime.ReadMemStats(&m1)
	per := (m1.TotalAlloc - m0.TotalAlloc) / n
	t.Logf("%d bytes a decode", per)
	if per > 7100 {
		t.Fatalf("%d bytes a decode, want at most 7100 (the bin takes 6144)", per)
	}
}

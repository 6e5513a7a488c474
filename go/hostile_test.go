package mpk

// Hostile inputs: declared counts and nesting that would make a decoder allocate far more than
// the input, or recurse past the goroutine stack. Each case runs in a child process (this test
// binary, re-run on TestHostileChild) whose address space is capped at what it had at start plus
// 1 GiB, so a regression ends that child (out of memory, or the fatal stack overflow) instead of
// the machine, and the parent reports it.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"mpk.dev/go/mpk/internal/memcap"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// hostileResult is what a child reports: the error, the bytes allocated by the decode, and the
// heap still in use after it while the decoded value is kept.
type hostileResult struct {
	Err      string
	Kind     string
	Offset   int64
	Alloc    uint64
	Retained uint64
	Len      int // the decoded map's length, where the case has one
}

// nestedMap32 is levels nested map32 heads of pairs pairs each (the key of each level's first
// pair a nil, its value the next level), padded with nils to size bytes.
func nestedMap32(levels int, pairs uint32, size int) []byte {
	var b []byte
	for i := 0; i < levels; i++ {
		b = append(b, 0xdf)
		b = binary.BigEndian.AppendUint32(b, pairs)
		b = append(b, 0xc0)
	}
	return append(b, bytes.Repeat([]byte{0xc0}, size-len(b))...)
}

// array32 is an array 32 head of n elements followed by the bytes of body.
func array32(n uint32, body []byte) []byte {
	return append(binary.BigEndian.AppendUint32([]byte{0xdd}, n), body...)
}

type page4k struct{ B [4096]byte }

// hostileCases run in the child; each returns the decoded value (kept alive while the heap is
// measured) and the error.
var hostileCases = map[string]func() (any, error){
	// 64 levels of 2^19 pairs in 1 MiB: checked one by one, each head fits in the bytes left.
	"nested map32 x64 into any": func() (any, error) {
		var v any
		return v, Unmarshal(nestedMap32(64, 1<<19, 1<<20+64*6), &v)
	},
	"nested map32 x256 into any": func() (any, error) {
		var v any
		return v, Unmarshal(nestedMap32(256, 1<<19, 1<<20+256*6), &v)
	},
	"nested map32 x64 into map[any]any": func() (any, error) {
		var v map[any]any
		return v, Unmarshal(nestedMap32(64, 1<<19, 1<<20+64*6), &v)
	},
	"nested map32 x64, stream": func() (any, error) {
		var v any
		return v, NewDecoder(bytes.NewReader(nestedMap32(64, 1<<19, 1<<20+64*6))).Decode(&v)
	},
	// Arrays of arrays: each level's first element is the next level.
	"nested array32 x64 into [][]...any": func() (any, error) {
		var b []byte
		for i := 0; i < 64; i++ {
			b = binary.BigEndian.AppendUint32(append(b, 0xdd), 1<<20)
		}
		b = append(b, bytes.Repeat([]byte{0xc0}, 1<<20)...)
		var v any
		return v, Unmarshal(b, &v)
	},
	// 262 KB of nils into 4 KiB elements: 1 GiB.
	"nils into []struct{B [4096]byte}": func() (any, error) {
		var v []page4k
		return v, Unmarshal(array32(1<<18, bytes.Repeat([]byte{0xc0}, 1<<18)), &v)
	},
	"nils into []*struct{B [4096]byte}": func() (any, error) {
		var v []*page4k
		return v, Unmarshal(array32(1<<18, bytes.Repeat([]byte{0x80}, 1<<18)), &v)
	},
	// 12 MB of valid input, one key 4 million times.
	"duplicate keys into any": func() (any, error) {
		var v any
		err := Unmarshal(duplicateKeys(4<<20), &v)
		return v, err
	},
	"duplicate keys into map[string]int": func() (any, error) {
		var v map[string]int
		err := Unmarshal(duplicateKeys(4<<20), &v)
		return v, err
	},
	// Ten million nested arrays with the depth limit raised as far as it goes.
	"10^7 nested arrays into any": func() (any, error) {
		lim := DefaultLimits()
		lim.Depth = math.MaxUint32
		var v any
		return v, DecodeOptions{Limits: &lim}.Unmarshal(deepArrays(10_000_000), &v)
	},
	"10^7 nested arrays into a recursive slice": func() (any, error) {
		lim := DefaultLimits()
		lim.Depth = math.MaxUint32
		var v nestSlice
		return v, DecodeOptions{Limits: &lim}.Unmarshal(deepArrays(10_000_000), &v)
	},
	"10^7 nested arrays, stream": func() (any, error) {
		lim := DefaultLimits()
		lim.Depth = math.MaxUint32
		dec := NewDecoder(bytes.NewReader(deepArrays(10_000_000)))
		dec.SetOptions(DecodeOptions{Limits: &lim})
		var v any
		return v, dec.Decode(&v)
	},
	"MaxDepth nested arrays decode": func() (any, error) {
		lim := DefaultLimits()
		lim.Depth = math.MaxUint32
		var v nestSlice
		return v, DecodeOptions{Limits: &lim}.Unmarshal(deepArrays(MaxDepth), &v)
	},
}

type nestSlice []nestSlice

func duplicateKeys(n int) []byte {
	b := binary.BigEndian.AppendUint32([]byte{0xdf}, uint32(n))
	return append(b, bytes.Repeat([]byte{0xa1, 'k', 0x01}, n)...)
}

// deepArrays is n nested arrays of one element around a nil.
func deepArrays(n int) []byte {
	return append(bytes.Repeat([]byte{0x91}, n), 0xc0)
}

// TestHostileChild runs one case when the parent asks for it.
func TestHostileChild(t *testing.T) {
	name := os.Getenv("MPK_HOSTILE_CASE")
	if name == "" {
		t.Skip("run by TestHostileInputs")
	}
	if err := memcap.CapAddressSpace(1 << 30); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v, err := hostileCases[name]()
	runtime.ReadMemStats(&after)
	res := hostileResult{Alloc: after.TotalAlloc - before.TotalAlloc}
	runtime.GC()
	runtime.ReadMemStats(&after)
	res.Retained = after.HeapAlloc
	switch m := v.(type) {
	case map[string]any:
		res.Len = len(m)
	case map[string]int:
		res.Len = len(m)
	}
	runtime.KeepAlive(v)
	if err != nil {
		res.Err = err.Error()
		var de *DecodeError
		if errors.As(err, &de) {
			res.Kind, res.Offset = de.Kind.String(), de.Offset
		}
	}
	out, _ := json.Marshal(res)
	fmt.Printf("RESULT %s\n", out)
}

func runHostile(t *testing.T, name string) hostileResult {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostileChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "MPK_HOSTILE_CASE="+name, "GOMAXPROCS=1")
	out, err := cmd.CombinedOutput()
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "RESULT "); ok {
			var res hostileResult
			if err := json.Unmarshal([]byte(line), &res); err != nil {
				t.Fatal(err)
			}
			return res
		}
	}
	head := out
	if len(head) > 2000 {
		head = head[:2000]
	}
	t.Fatalf("%s: the child failed (%v):\n%s", name, err, head)
	return hostileResult{}
}

// TestHostileInputs checks every amplification input of the Go module's issue: each is refused
// with the error a check of the bytes alone gives (or, for large element types, a LengthLimit
// at the head that would go over the allocation budget), allocating a few megabytes at most.
func TestHostileInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocesses")
	}
	wantSkip := func(data []byte) (string, int64) {
		_, err := Skip(data)
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Fatalf("Skip: %v", err)
		}
		return de.Kind.String(), de.Offset
	}
	nested64Kind, nested64Off := wantSkip(nestedMap32(64, 1<<19, 1<<20+64*6))
	cases := []struct {
		name     string
		kind     string
		offset   int64
		maxAlloc uint64
	}{
		{"nested map32 x64 into any", nested64Kind, nested64Off, 16 << 20},
		{"nested map32 x256 into any", "truncated", 1<<20 + 256*6, 16 << 20},
		{"nested map32 x64 into map[any]any", nested64Kind, nested64Off, 16 << 20},
		{"nested map32 x64, stream", nested64Kind, nested64Off, 16 << 20},
		{"nested array32 x64 into [][]...any", "truncated", 64*5 + 1<<20, 32 << 20},
		{"nils into []struct{B [4096]byte}", "length_limit", 0, 16 << 20},
		// Each pointer is charged as it is allocated: the one that goes over the budget fails.
		{"nils into []*struct{B [4096]byte}", "length_limit", 5 + (DefaultAllocBudget(5+1<<18)-8<<18)/4096, 80 << 20},
		{"10^7 nested arrays into any", "depth_limit", MaxDepth, 64 << 20},
		{"10^7 nested arrays into a recursive slice", "depth_limit", MaxDepth, 64 << 20},
		{"10^7 nested arrays, stream", "depth_limit", MaxDepth, 128 << 20},
	}
	for _, c := range cases {
		res := runHostile(t, c.name)
		if res.Kind != c.kind || res.Offset != c.offset {
			t.Errorf("%s: got %q (%s at %d), want %s at %d", c.name, res.Err, res.Kind, res.Offset, c.kind, c.offset)
		}
		if res.Alloc > c.maxAlloc {
			t.Errorf("%s: allocated %d bytes, want at most %d", c.name, res.Alloc, c.maxAlloc)
		}
	}
	// Valid input that repeats one key keeps a map sized for what it holds.
	for _, name := range []string{"duplicate keys into any", "duplicate keys into map[string]int"} {
		res := runHostile(t, name)
		if res.Err != "" || res.Len != 1 {
			t.Errorf("%s: %s, %d keys", name, res.Err, res.Len)
		}
		if res.Retained > 32<<20 {
			t.Errorf("%s: %d bytes retained after decoding 12 MB", name, res.Retained)
		}
	}
	// Nesting up to MaxDepth still decodes.
	if res := runHostile(t, "MaxDepth nested arrays decode"); res.Err != "" {
		t.Errorf("MaxDepth nested arrays: %s", res.Err)
	}
}

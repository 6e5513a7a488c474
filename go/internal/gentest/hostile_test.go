package gentest

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"mpk.dev/go/mpk/internal/memcap"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"mpk.dev/go/mpk"
)

// Generated UnmarshalMsg bounds what declared counts allocate as Unmarshal does: each hostile
// input runs in a child process with a capped address space, and must fail with the error Skip
// gives (or LengthLimit over the allocation budget) after allocating a few megabytes at most.

// kidsChain is levels of {"kids": [<count elements>, the next level first]}, padded with empty
// maps to size bytes.
func kidsChain(levels int, count uint16, size int) []byte {
	var b []byte
	for i := 0; i < levels; i++ {
		b = append(b, 0x81, 0xa4, 'k', 'i', 'd', 's', 0xdc)
		b = binary.BigEndian.AppendUint16(b, count)
	}
	return append(b, bytes.Repeat([]byte{0x80}, size-len(b))...)
}

func pagesInput(key byte, fill byte) []byte {
	b := []byte{0x81, 0xa1, key, 0xdd}
	b = binary.BigEndian.AppendUint32(b, 1<<18)
	return append(b, bytes.Repeat([]byte{fill}, 1<<18)...)
}

var genHostile = map[string]func() ([]byte, error){
	"tree kids x500": func() ([]byte, error) {
		in := kidsChain(500, 60000, 66<<10)
		var t Tree
		_, err := t.UnmarshalMsg(in)
		return in, err
	},
	"pages of nils": func() ([]byte, error) {
		in := pagesInput('p', 0xc0)
		var p Pages
		_, err := p.UnmarshalMsg(in)
		return in, err
	},
	// Through mpk.Unmarshal, which decodes each element with the generated code: the elements
	// share one allocation budget (200 pages of 4 KiB each, 2000 times: 1.6 GB from 412 KB).
	"unmarshal []Pages, one budget": func() ([]byte, error) {
		elem := append([]byte{0x81, 0xa1, 'q', 0xdc, 0x00, 200}, bytes.Repeat([]byte{0x80}, 200)...)
		in := append([]byte{0xdc, 0x07, 0xd0}, bytes.Repeat(elem, 2000)...)
		var ps []Pages
		err := mpk.Unmarshal(in, &ps)
		return in, err
	},
	// A field the generated code hands to reflection shares the budget of UnmarshalMsg: 2000
	// elements of 200 pointers to 4 KiB pages each (1.6 GB from 1.2 MB).
	"book of pages by reflection, one budget": func() ([]byte, error) {
		elem := []byte{0x81, 0xa1, 'r', 0xde, 0x00, 200}
		for i := 0; i < 200; i++ {
			elem = append(elem, 0xcc, byte(i), 0x80)
		}
		in := append([]byte{0x81, 0xa5, 'p', 'a', 'g', 'e', 's', 0xdc, 0x07, 0xd0}, bytes.Repeat(elem, 2000)...)
		var bk Book
		_, err := bk.UnmarshalMsg(in)
		return in, err
	},
	"pointers to pages": func() ([]byte, error) {
		in := pagesInput('q', 0x80)
		var p Pages
		_, err := p.UnmarshalMsg(in)
		return in, err
	},
}

type genResult struct {
	Kind, Err string
	Offset    int64
	Alloc     uint64
}

func TestGenHostileChild(t *testing.T) {
	name := os.Getenv("MPK_GEN_HOSTILE")
	if name == "" {
		t.Skip("run by TestGeneratedHostileInputs")
	}
	if err := memcap.CapAddressSpace(1 << 30); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := genHostile[name]()
	runtime.ReadMemStats(&after)
	res := genResult{Alloc: after.TotalAlloc - before.TotalAlloc}
	var de *mpk.DecodeError
	if errors.As(err, &de) {
		res.Kind, res.Offset = de.Kind.String(), de.Offset
	}
	if err != nil {
		res.Err = err.Error()
	}
	out, _ := json.Marshal(res)
	fmt.Printf("RESULT %s\n", out)
}

func TestGeneratedHostileInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocesses")
	}
	skipErr := func(b []byte) (string, int64) {
		_, err := mpk.Skip(b)
		var de *mpk.DecodeError
		if !errors.As(err, &de) {
			t.Fatalf("Skip: %v", err)
		}
		return de.Kind.String(), de.Offset
	}
	treeKind, treeOff := skipErr(kidsChain(500, 60000, 66<<10))
	// The slice of 2^18 pointers (2 MiB) fits the budget; then each page is charged until one
	// goes over: 1 MiB + 256 bytes per input byte.
	budget := mpk.DefaultAllocBudget(len(pagesInput('q', 0x80)))
	cases := []struct {
		name   string
		kind   string
		offset int64
		alloc  uint64
	}{
		{"tree kids x500", treeKind, treeOff, 16 << 20},
		{"pages of nils", "length_limit", 3, 16 << 20},
		{"pointers to pages", "length_limit", 8 + (budget-8<<18)/4096, 96 << 20},
		{"unmarshal []Pages, one budget", "length_limit", -1, 128 << 20},
		{"book of pages by reflection, one budget", "length_limit", -1, 512 << 20},
	}
	for _, c := range cases {
		cmd := exec.Command(os.Args[0], "-test.run=^TestGenHostileChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "MPK_GEN_HOSTILE="+c.name)
		out, err := cmd.CombinedOutput()
		var res *genResult
		for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
			if line, ok := strings.CutPrefix(sc.Text(), "RESULT "); ok {
				res = new(genResult)
				if err := json.Unmarshal([]byte(line), res); err != nil {
					t.Fatal(err)
				}
			}
		}
		if res == nil {
			if len(out) > 2000 {
				out = out[:2000]
			}
			t.Errorf("%s: the child failed (%v):\n%s", c.name, err, out)
			continue
		}
		if res.Kind != c.kind || (c.offset >= 0 && res.Offset != c.offset) {
			t.Errorf("%s: got %q (%s at %d), want %s at %d", c.name, res.Err, res.Kind, res.Offset, c.kind, c.offset)
		}
		if res.Alloc > c.alloc {
			t.Errorf("%s: allocated %d bytes, want at most %d", c.name, res.Alloc, c.alloc)
		}
	}
}

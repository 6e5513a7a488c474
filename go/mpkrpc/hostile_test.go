package mpkrpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mpk.dev/go/mpk/internal/memcap"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"mpk.dev/go/mpk"
)

// pipeConn is an in-memory connection: the test writes what the peer sends into w.
type pipeConn struct {
	*io.PipeReader
	w io.Writer
}

func (c pipeConn) Write(b []byte) (int, error) { return c.w.Write(b) }

// hostileStreams are what a hostile peer sends before closing the connection; each must end the
// endpoint with the error named, allocating little.
var hostileStreams = map[string]struct {
	data     func() []byte
	kind     string // the cause's Kind ("" for io.EOF)
	messages int    // the messages in data (whole or not)
}{
	// A request whose params declare 16 Mi elements (the array limit) and bring 100,000.
	"declared array": {func() []byte {
		b := []byte{0x94, 0x00, 0x01, 0xa1, 0x6d, 0xdd, 0x00, 0xff, 0xff, 0xff}
		return append(b, bytes.Repeat([]byte{0xc0}, 100000)...)
	}, "truncated", 1},
	// A str declared at 64 MiB - 1 (the str limit) with 64 KiB present.
	"declared str": {func() []byte {
		b := []byte{0x94, 0x00, 0x01, 0xa1, 0x6d, 0x91, 0xdb, 0x03, 0xff, 0xff, 0xff}
		return append(b, bytes.Repeat([]byte{'x'}, 64<<10)...)
	}, "truncated", 1},
	// 200,000 pipelined requests to a handler that never returns: a goroutine each would be
	// gigabytes of stacks.
	"request flood": {func() []byte {
		return bytes.Repeat([]byte{0x94, 0x00, 0x01, 0xa4, 'w', 'a', 'i', 't', 0x90}, 200000)
	}, "", 200000},
	// 1 Mi nils as the params of one request to a handler taking []any.
	"many nils": {func() []byte {
		b := []byte{0x94, 0x00, 0x01, 0xa4, 'l', 'i', 's', 't', 0x91, 0xdd, 0x00, 0x10, 0x00, 0x00}
		return append(b, bytes.Repeat([]byte{0xc0}, 1<<20)...)
	}, "", 1},
}

type hostileResult struct {
	Err        string
	Kind       string
	Goroutines int
	HeapInuse  uint64
	TotalAlloc uint64
}

func TestHostileRPCChild(t *testing.T) {
	name := os.Getenv("MPKRPC_HOSTILE_CASE")
	if name == "" {
		t.Skip("run by TestHostileRPCMemory")
	}
	if err := memcap.CapAddressSpace(1 << 30); err != nil {
		t.Fatal(err)
	}
	data := hostileStreams[name].data()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	pr, pw := io.Pipe()
	ep := New(pipeConn{pr, io.Discard}, nil)
	release := make(chan struct{})
	ep.Register("wait", func() { <-release })
	ep.Register("list", func(a []any) int { return len(a) })
	go func() {
		pw.Write(data)
		pw.Close()
	}()
	<-ep.Done()
	res := hostileResult{Goroutines: runtime.NumGoroutine()}
	runtime.ReadMemStats(&after)
	res.TotalAlloc = after.TotalAlloc - before.TotalAlloc
	runtime.GC()
	runtime.ReadMemStats(&after)
	res.HeapInuse = after.HeapInuse - min(after.HeapInuse, before.HeapInuse) // what the endpoint holds (queued requests)
	runtime.KeepAlive(data)
	close(release)
	ep.Wait()
	err := errors.Unwrap(ep.Err())
	res.Err = err.Error()
	var de *mpk.DecodeError
	if errors.As(err, &de) {
		res.Kind = de.Kind.String()
	}
	out, _ := json.Marshal(res)
	fmt.Printf("RESULT %s\n", out)
}

// Each hostile stream runs in a child process whose address space is capped at 1 GiB over its
// start: the endpoint ends with the documented error, allocating at most a few times the bytes
// received, with a bounded number of goroutines.
func TestHostileRPCMemory(t *testing.T) {
	for name, hs := range hostileStreams {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHostileRPCChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), "MPKRPC_HOSTILE_CASE="+name, "GOMAXPROCS=1")
			out, err := cmd.CombinedOutput()
			var res *hostileResult
			sc := bufio.NewScanner(bytes.NewReader(out))
			for sc.Scan() {
				if line, ok := strings.CutPrefix(sc.Text(), "RESULT "); ok {
					res = new(hostileResult)
					if err := json.Unmarshal([]byte(line), res); err != nil {
						t.Fatal(err)
					}
				}
			}
			if res == nil {
				t.Fatalf("child failed (%v):\n%.2000s", err, out)
			}
			n := uint64(len(hs.data()))
			t.Logf("%d bytes in: %+v", n, *res)
			if res.Kind != hs.kind || (hs.kind == "" && res.Err != "EOF") {
				t.Fatalf("ended with %q (%s), want %q", res.Err, res.Kind, hs.kind)
			}
			// Allocation is linear in the input: the copy the test holds, the stream buffer, each
			// message's copy, the queue of waiting requests (measured: about 18 bytes allocated
			// and 5 held per byte of the request flood, 4 per byte of the 1 Mi nils).
			allocBound := 32*n + (8 << 20)
			if raceEnabled {
				// Under -race sync.Pool drops items at random, so a decode may allocate mpk's pooled
				// decode state afresh (about 2.3 KiB; measured: 512 MB allocated for the 200,000
				// requests of the flood, 35 MB without -race). The bound then also allows 4 KiB per
				// message the reader decodes (one decode state, with room); what the endpoint holds
				// (HeapInuse) keeps its bound.
				allocBound += 4096 * uint64(hs.messages)
			}
			if res.TotalAlloc > allocBound || res.HeapInuse > 8*n+(8<<20) {
				t.Fatalf("allocated %d bytes (bound %d), holding %d, for %d bytes of input", res.TotalAlloc, allocBound, res.HeapInuse, n)
			}
			if res.Goroutines > 300 {
				t.Fatalf("%d goroutines", res.Goroutines)
			}
		})
	}
}

// At most MaxHandlers requests run at once; the rest wait their turn and are all answered.
func TestEndpointMaxHandlers(t *testing.T) {
	a, b := pair(t, nil, &Options{MaxHandlers: 2})
	var running, most atomic.Int32
	release := make(chan struct{})
	started := make(chan struct{}, 10)
	b.Register("work", func(i int) int {
		n := running.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		started <- struct{}{}
		<-release
		running.Add(-1)
		return i
	})
	ctx := ctxT(t)
	calls := make([]*Pending, 10)
	for i := range calls {
		calls[i] = a.Go(ctx, "work", i)
	}
	<-started
	<-started
	// The reader is not blocked: another call (to a handler of the other side) goes through.
	a.Register("ping", func() string { return "pong" })
	if v, err := b.Call(ctx, "ping"); err != nil || v != "pong" {
		t.Fatalf("ping = %v, %v", v, err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 10; i++ {
			release <- struct{}{}
		}
	}()
	for i, p := range calls {
		var v int
		if err := p.Result(&v); err != nil || v != i {
			t.Fatalf("work %d = %d, %v", i, v, err)
		}
	}
	wg.Wait()
	if m := most.Load(); m != 2 {
		t.Fatalf("%d handlers ran at once, want 2", m)
	}
}

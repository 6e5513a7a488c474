package mpkrpc

import (
	"context"
	"testing"
)

// Loopback TCP benchmarks (not run by the tests): sequential round trips and 64 calls in flight,
// with arguments [1, 2] and an 8 KiB bin.
func benchCalls(b *testing.B, inflight int, args ...any) {
	a, s := pair(b, nil, nil)
	s.Register("f", func(x ...any) int { return len(x) })
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	if inflight == 1 {
		for i := 0; i < b.N; i++ {
			if _, err := a.Call(ctx, "f", args...); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	window := make(chan *Pending, inflight)
	go func() {
		for i := 0; i < b.N; i++ {
			window <- a.Go(ctx, "f", args...)
		}
		close(window)
	}()
	for p := range window {
		if _, err := p.Value(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCallSequentialSmall(b *testing.B) { benchCalls(b, 1, 1, 2) }
func BenchmarkCallInFlight64Small(b *testing.B) { benchCalls(b, 64, 1, 2) }
func BenchmarkCallSequential8KiB(b *testing.B)  { benchCalls(b, 1, make([]byte, 8192)) }
func BenchmarkCallInFlight64_8KiB(b *testing.B) { benchCalls(b, 64, make([]byte, 8192)) }

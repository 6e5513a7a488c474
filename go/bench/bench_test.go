package bench

import "testing"

// The benchmarks, for `go test -bench . -benchmem` by hand; cmd/report runs the same sides
// interleaved in rounds and writes the medians (make bench-go).

func runCase(b *testing.B, c Case) {
	for _, s := range c.Sides {
		if s.Marshal != nil {
			b.Run("marshal/"+s.Name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(s.Input)))
				for i := 0; i < b.N; i++ {
					if _, err := s.Marshal(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run("unmarshal/"+s.Name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(s.Input)))
			for i := 0; i < b.N; i++ {
				if _, err := s.Unmarshal(s.Input); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkProduct(b *testing.B) { runCase(b, ProductCase()) }

func BenchmarkTweet(b *testing.B) { runCase(b, TweetCase()) }

func BenchmarkSyntheticAny(b *testing.B) {
	for _, c := range SyntheticCases() {
		b.Run(c.Name, func(b *testing.B) { runCase(b, c) })
	}
}

func BenchmarkDecodeAny(b *testing.B) {
	for _, name := range CorpusNames {
		c, ok := CorpusCase(name)
		if !ok {
			b.Logf("skipping %s: not found in %s", name, BenchData())
			continue
		}
		b.Run(c.Name, func(b *testing.B) { runCase(b, c) })
	}
}

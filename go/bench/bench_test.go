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
		if s.Unmarshal == nil {
			continue
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

func BenchmarkTextFields(b *testing.B) {
	c, _ := TextCase()
	runCase(b, c)
}

// BenchmarkSeedTyped: Test1-Test4 as Go structs (build/bench-workloads).
func BenchmarkSeedTyped(b *testing.B) {
	cases, notes := SeedTypedCases()
	for _, n := range notes {
		b.Log(n)
	}
	for _, c := range cases {
		b.Run(c.Name, func(b *testing.B) { runCase(b, c) })
	}
}

// BenchmarkAny: the `any` trees (build/bench-workloads, or the generated fallbacks).
func BenchmarkAny(b *testing.B) {
	cases, notes := WorkloadCases()
	for _, n := range notes {
		b.Log(n)
	}
	for _, c := range cases {
		b.Run(c.Name+variantSuffix(c), func(b *testing.B) { runCase(b, c) })
	}
}

func variantSuffix(c Case) string {
	if c.Variant != "" {
		return "/" + c.Variant
	}
	return ""
}

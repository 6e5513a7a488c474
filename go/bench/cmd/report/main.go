// Command report runs every bench side interleaved in rounds (so that all sides share the
// machine's noise), through testing.Benchmark, and prints the medians as Markdown tables with
// ratios against mpk, then the bar of the task: the reflection path at least 2x
// vmihailenco/msgpack and faster than protobuf, the generated path at least 1.2x msgp.
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"mpk.dev/go/bench"
)

type sample struct{ ns, bytes, allocs []float64 }

type row struct {
	cas, op, side string
	size          int
	fn            func(b *testing.B)
}

func main() {
	testing.Init()
	rounds := flag.Int("rounds", 7, "rounds; each runs every side once")
	benchtime := flag.String("benchtime", "200ms", "time per side per round")
	filter := flag.String("filter", "", "only cases whose name contains this")
	only := flag.String("sides", "", "only these sides (comma-separated), for quick comparisons while tuning")
	clock := flag.String("clock", "wall", "wall: elapsed time; cpu: the process's CPU time (user+system, GC threads included), which time spent waiting for a core on a loaded machine does not inflate")
	flag.Parse()
	must(flag.Set("test.benchtime", *benchtime))

	cases := []bench.Case{bench.ProductCase(), bench.TweetCase()}
	for _, f := range bench.CorpusNames {
		if c, ok := bench.CorpusCase(f); ok {
			cases = append(cases, c)
		} else {
			fmt.Fprintf(os.Stderr, "report: %s not found in %s, skipped\n", f, bench.BenchData())
		}
	}
	cases = append(cases, bench.SyntheticCases()...)
	var rows []row
	for _, c := range cases {
		if !strings.Contains(c.Name, *filter) {
			continue
		}
		for _, s := range c.Sides {
			s := s
			if *only != "" && !slices.Contains(strings.Split(*only, ","), s.Name) {
				continue
			}
			if s.Marshal != nil {
				rows = append(rows, row{c.Name, "marshal", s.Name, len(s.Input), func(b *testing.B) {
					b.ReportAllocs()
					c0 := cpuTime()
					for i := 0; i < b.N; i++ {
						if _, err := s.Marshal(); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
				}})
			}
			rows = append(rows, row{c.Name, "unmarshal", s.Name, len(s.Input), func(b *testing.B) {
				b.ReportAllocs()
				c0 := cpuTime()
				for i := 0; i < b.N; i++ {
					if _, err := s.Unmarshal(s.Input); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
			}})
		}
	}
	samples := make([]sample, len(rows))
	start := time.Now()
	for r := 0; r < *rounds; r++ {
		for i, rw := range rows {
			res := testing.Benchmark(rw.fn)
			if res.N == 0 {
				fmt.Fprintf(os.Stderr, "report: %s/%s/%s failed\n", rw.cas, rw.op, rw.side)
				os.Exit(1)
			}
			ns := float64(res.T.Nanoseconds()) / float64(res.N)
			if *clock == "cpu" {
				ns = res.Extra["cpu-ns/op"]
			}
			samples[i].ns = append(samples[i].ns, ns)
			samples[i].bytes = append(samples[i].bytes, float64(res.AllocedBytesPerOp()))
			samples[i].allocs = append(samples[i].allocs, float64(res.AllocsPerOp()))
		}
		fmt.Fprintf(os.Stderr, "report: round %d/%d done (%s)\n", r+1, *rounds, time.Since(start).Round(time.Second))
	}
	print(rows, samples, *rounds, *benchtime, *clock)
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func print(rows []row, samples []sample, rounds int, benchtime, clock string) {
	fmt.Printf("Medians of %d interleaved rounds (%s per side per round), %s, %s/%s, GOMAXPROCS %d.\n",
		rounds, benchtime, runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0))
	if clock == "cpu" {
		fmt.Printf("Times are the process's CPU time per op (user+system, GC included), not elapsed time.\n")
	}
	fmt.Printf("Ratio: the side's ns/op divided by mpk's in the same table (above 1: mpk is faster).\n")
	med := map[string]float64{}
	for i, rw := range rows {
		med[rw.cas+"|"+rw.op+"|"+rw.side] = median(samples[i].ns)
	}
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	opRank := map[string]int{"marshal": 0, "unmarshal": 1}
	sort.SliceStable(order, func(a, b int) bool {
		ra, rb := rows[order[a]], rows[order[b]]
		if ra.cas != rb.cas {
			return false // cases keep their order: rows of one case are contiguous
		}
		return opRank[ra.op] < opRank[rb.op]
	})
	last := ""
	for _, i := range order {
		rw := rows[i]
		key := rw.cas + " " + rw.op
		if key != last {
			fmt.Printf("\n#### %s, %s (mpk's encoding: %d bytes)\n\n", rw.cas, rw.op, sizeOf(rows, rw.cas))
			fmt.Printf("| side | ns/op | MB/s | B/op | allocs/op | ratio vs mpk |\n|---|---:|---:|---:|---:|---:|\n")
			last = key
		}
		ns := med[rw.cas+"|"+rw.op+"|"+rw.side]
		base := med[rw.cas+"|"+rw.op+"|mpk"]
		ratio := "-"
		if base > 0 {
			ratio = fmt.Sprintf("%.2f", ns/base)
		}
		fmt.Printf("| %s | %.0f | %.0f | %.0f | %.0f | %s |\n", rw.side, ns, float64(rw.size)/ns*1e3,
			median(samples[i].bytes), median(samples[i].allocs), ratio)
	}
	fmt.Printf("\n#### The bar (same run, medians)\n\n| check | value | bar | met |\n|---|---:|---:|---|\n")
	for _, c := range []string{"product", "tweet"} {
		for _, op := range []string{"marshal", "unmarshal"} {
			get := func(side string) float64 { return med[c+"|"+op+"|"+side] }
			check := func(what string, v, bar float64) {
				if v > 0 && !math.IsInf(v, 0) {
					fmt.Printf("| %s %s: %s | %.2fx | >= %.2fx | %v |\n", c, op, what, v, bar, v >= bar)
				}
			}
			check("vmihailenco / mpk", get("vmihailenco")/get("mpk"), 2)
			check("protobuf / mpk", get("protobuf")/get("mpk"), 1)
			check("msgp / mpkgen", get("msgp")/get("mpkgen"), 1.2)
		}
	}
}

func sizeOf(rows []row, cas string) int {
	for _, r := range rows {
		if r.cas == cas && r.side == "mpk" {
			return r.size
		}
	}
	return 0
}

// cpuTime is the CPU time the process has used so far (user+system, every thread).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	must(syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

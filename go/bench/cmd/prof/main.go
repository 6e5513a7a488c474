// Command prof runs one side of one case in a loop, for a CPU profile or an instruction count
// (valgrind --tool=callgrind) while tuning: go run ./cmd/prof -case twitter -side mpk -op marshal.
// Only that case is built (MPK_BENCH_ONLY), so the set-up does not fill the profile.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"mpk.dev/go/bench"
)

func main() {
	name := flag.String("case", "twitter", "case name (a workload id, ints1m, strings4k, product, tweet, text_fields)")
	side := flag.String("side", "mpk", "side (\"floor\": the copy floor of an unmarshal, bench.FloorSide)")
	op := flag.String("op", "marshal", "marshal or unmarshal")
	n := flag.Int("n", 100, "iterations")
	prof := flag.String("cpuprofile", "", "write a CPU profile here")
	gcEvery := flag.Int("gc", 0, "with GOGC=off: collect (runtime.GC) every this many ops, outside runLoop, so that the ops reuse freed memory as under a running collector (and pay its clearing) while the collector's own work stays out of the count")
	variant := flag.String("variant", "", "the case's variant (\"any\" for the `any` tree of a workload that also has a typed case, such as product)")
	flag.Parse()
	os.Setenv("MPK_BENCH_ONLY", *name)
	os.Setenv("MPK_BENCH_NOCHECK", "1")
	var cases []bench.Case
	switch {
	case *variant != "":
		cases, _ = bench.WorkloadCases()
	case *name == "product":
		cases = []bench.Case{bench.ProductCase()}
	case *name == "tweet":
		cases = []bench.Case{bench.TweetCase()}
	case *name == "text_fields":
		c, _ := bench.TextCase()
		cases = []bench.Case{c}
	default:
		cases, _ = bench.WorkloadCases()
	}
	for _, c := range cases {
		if c.Name != *name || c.Variant != *variant {
			continue
		}
		sides := c.Sides
		if *side == "floor" && *op == "unmarshal" {
			sides = append(sides, bench.FloorSide(c.Sides[0].Input))
		}
		if !c.Typed && len(sides) > 0 {
			sides = append(sides, bench.FloorSides(c.Sides)...)
		}
		for _, s := range sides {
			if s.Name != *side {
				continue
			}
			if *prof != "" {
				f, err := os.Create(*prof)
				if err != nil {
					panic(err)
				}
				pprof.StartCPUProfile(f)
				defer pprof.StopCPUProfile()
			}
			t0 := time.Now()
			if *gcEvery > 0 {
				for done := 0; done < *n; done += *gcEvery {
					runtime.GC()
					runLoop(s, *op == "marshal", min(*gcEvery, *n-done))
				}
			} else {
				runLoop(s, *op == "marshal", *n)
			}
			fmt.Printf("%s/%s/%s: %v per op\n", c.Name, *op, s.Name, time.Since(t0)/time.Duration(*n))
			return
		}
	}
	fmt.Fprintln(os.Stderr, "prof: no such case or side")
	os.Exit(1)
}

// runLoop is the timed loop; count its instructions alone with
// GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --collect-atstart=no --toggle-collect=main.runLoop
//
//go:noinline
func runLoop(s bench.Side, marshal bool, n int) {
	for i := 0; i < n; i++ {
		var err error
		if marshal {
			_, err = s.Marshal()
		} else {
			_, err = s.Unmarshal(s.Input)
		}
		if err != nil {
			panic(err)
		}
	}
}

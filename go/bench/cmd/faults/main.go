// Command faults runs sides of one case alternately in one process and reports, per side, the
// user and system CPU time and the minor page faults (getrusage) per op, and the GC cycles:
// what an instruction count (callgrind) does not see of an allocation-heavy op.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"mpk.dev/go/bench"
)

func main() {
	name := flag.String("case", "long_string", "case name")
	sides := flag.String("sides", "mpk,msgp", "sides")
	op := flag.String("op", "unmarshal", "marshal or unmarshal")
	n := flag.Int("n", 200, "iterations per round")
	rounds := flag.Int("rounds", 10, "rounds")
	floor := flag.Bool("floor", false, "add floor sides for marshal: floor-append (append of mpk's output bytes to a nil slice: one allocation of the exact size, only its tail cleared) and floor-make (make of that size, cleared, then copy)")
	flag.Parse()
	os.Setenv("MPK_BENCH_ONLY", *name)
	os.Setenv("MPK_BENCH_NOCHECK", "1")
	var cases []bench.Case
	switch *name {
	case "product":
		cases = []bench.Case{bench.ProductCase()}
	case "tweet":
		cases = []bench.Case{bench.TweetCase()}
	default:
		cases, _ = bench.WorkloadCases()
	}
	var sel []bench.Side
	for _, c := range cases {
		if c.Name != *name || c.Variant != "" {
			continue
		}
		for _, want := range strings.Split(*sides, ",") {
			for _, s := range c.Sides {
				if s.Name == want {
					sel = append(sel, s)
				}
			}
		}
	}
	if strings.Contains(*sides, "floor") && *op == "unmarshal" {
		for _, s := range sel {
			if s.Name == "mpk" {
				sel = append(sel, bench.FloorSide(s.Input))
				break
			}
		}
	}
	if *floor && *op == "marshal" && len(sel) > 0 {
		sel = append(sel, bench.FloorSides(sel)...)
	}
	type acc struct {
		ut, st, min time.Duration
		flt         int64
		gc          uint32
		cpu         []float64 // user+system ns per op of each round
	}
	tot := make([]acc, len(sel))
	for r := 0; r < *rounds; r++ {
		for i, s := range sel {
			var ru0, ru1 syscall.Rusage
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
			t0 := time.Now()
			for k := 0; k < *n; k++ {
				var err error
				if *op == "marshal" {
					_, err = s.Marshal()
				} else {
					_, err = s.Unmarshal(s.Input)
				}
				if err != nil {
					panic(err)
				}
			}
			el := time.Since(t0)
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
			if r == 0 || el < tot[i].min {
				tot[i].min = el
			}
			runtime.ReadMemStats(&m1)
			ut := time.Duration(syscall.TimevalToNsec(ru1.Utime) - syscall.TimevalToNsec(ru0.Utime))
			st := time.Duration(syscall.TimevalToNsec(ru1.Stime) - syscall.TimevalToNsec(ru0.Stime))
			tot[i].ut += ut
			tot[i].st += st
			tot[i].cpu = append(tot[i].cpu, float64(ut+st)/float64(*n))
			tot[i].flt += ru1.Minflt - ru0.Minflt
			tot[i].gc += m1.NumGC - m0.NumGC
		}
	}
	ops := time.Duration(*n * *rounds)
	for i, s := range sel {
		t := tot[i]
		slices.Sort(t.cpu)
		fmt.Printf("%-10s user %8v sys %8v per op (median round %v), min-round %8v per op, minflt %.2f per op, gc %d\n", s.Name, t.ut/ops, t.st/ops, time.Duration(t.cpu[len(t.cpu)/2]), t.min/time.Duration(*n), float64(t.flt)/float64(ops), t.gc)
	}
}

// Command report runs every bench side interleaved in rounds (so that all sides share the
// machine's noise) and prints the medians as Markdown tables with ratios against mpk, then the
// bars of issue 11; with -sidecar it also writes the rows as bench/results/go.json (the format of
// bench/README.md, "The sidecar").
//
// The cases run one after another, each built just before its rounds and released after them
// (runGroup); within a case the sides are interleaved in rounds. Each side is calibrated in two
// passes (see recalibrate) to an iteration count for the benchtime; B/op and allocs/op come from
// the first round; every round times exactly that many iterations, so a round costs about
// benchtime per side and no ramp-up.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"mpk.dev/go/bench"
)

type row struct {
	cas    *bench.Case
	op     string // marshal or unmarshal
	side   *bench.Side
	size   int
	fn     func(n int)
	n      int     // iterations per round, from the calibration
	bytes  float64 // B/op, allocs/op from the calibration
	allocs float64
	ns     []float64
}

func main() {
	rounds := flag.Int("rounds", 15, "rounds; each runs every side once")
	benchtime := flag.Duration("benchtime", 30*time.Millisecond, "time per side per round")
	filter := flag.String("filter", "", "only cases whose name contains this")
	only := flag.String("sides", "", "only these sides (comma-separated), for quick comparisons while tuning")
	clock := flag.String("clock", "wall", "wall: elapsed time; cpu: the process's CPU time (user+system, GC threads included), which time spent waiting for a core on a loaded machine does not inflate")
	ops := flag.String("ops", "", "only this op (marshal or unmarshal), for tuning")
	sidecar := flag.String("sidecar", "", "write the rows as JSON here (bench/results/go.json)")
	quick := flag.Bool("quick", false, "mark the sidecar as a quick run")
	flag.Parse()

	start := time.Now()
	cases := []bench.Case{bench.ProductCase(), bench.TweetCase()}
	tc, notes := bench.TextCase()
	cases = append(cases, tc)
	sc, snotes := bench.SeedTypedCases()
	cases = append(cases, sc...)
	notes = append(notes, snotes...)
	// The `any` cases are built once here for their names and notes, then dropped and built
	// again one at a time (see runGroup).
	wc, wnotes := bench.WorkloadCases()
	notes = append(notes, wnotes...)
	for _, n := range notes {
		fmt.Fprintln(os.Stderr, "report: "+n)
	}
	groups := make([]func() []bench.Case, 0, len(cases)+len(wc))
	for i := range cases {
		if strings.Contains(cases[i].Name, *filter) {
			groups = append(groups, func() []bench.Case { return cases[i : i+1] })
		}
	}
	var names []string
	for _, c := range wc {
		if strings.Contains(c.Name, *filter) && !slices.Contains(names, c.Name) {
			names = append(names, c.Name)
		}
	}
	wc = nil
	for _, name := range names {
		groups = append(groups, func() []bench.Case { cs, _ := bench.WorkloadCasesOnly(name); return cs })
	}
	fmt.Fprintf(os.Stderr, "report: %d cases, set up in %s\n", len(groups), time.Since(start).Round(time.Millisecond))
	var rows []*row
	for gi, g := range groups {
		rows = append(rows, runGroup(g(), *only, *ops, *rounds, *benchtime, *clock)...)
		fmt.Fprintf(os.Stderr, "report: case %d/%d done (%s)\n", gi+1, len(groups), time.Since(start).Round(time.Second))
	}
	print(rows, *rounds, *benchtime, *clock, notes)
	if *sidecar != "" {
		writeSidecar(*sidecar, rows, *quick, *rounds, *benchtime, *clock)
	}
}

// runGroup times the sides of cases (one case, or a workload's variants), interleaved in rounds,
// and returns their rows with the cases' data released. Each case is built just before its
// rounds and dropped after them, so the heap holds one case's values while it is timed: with
// every case built at once the bench held 78 MB of trees (600,000 objects) that each garbage
// collection marked again, 30-110 ms a cycle on the shared machine, charged to whichever row
// happened to be allocating then. A side that allocates a megabyte a call (long_string,
// bins64k, utf8_strings) paid 0.3-1 ms a call in a round that took a cycle and nothing in one
// that did not, so the medians of equal copying sides differed by up to 5x (long_string
// unmarshal: mpk 1075 us with 2 cycles in its round, msgp 185 us with none; getrusage and
// MemStats per row).
func runGroup(cases []bench.Case, only, ops string, rounds int, benchtime time.Duration, clock string) []*row {
	var rows []*row
	for ci := range cases {
		c := &cases[ci]
		for si := range c.Sides {
			s := &c.Sides[si]
			if only != "" && !slices.Contains(strings.Split(only, ","), s.Name) {
				continue
			}
			if s.Marshal != nil && ops != "unmarshal" {
				rows = append(rows, &row{cas: c, op: "marshal", side: s, size: len(s.Input), fn: func(n int) {
					for i := 0; i < n; i++ {
						if _, err := s.Marshal(); err != nil {
							panic(err)
						}
					}
				}})
			}
			if ops == "marshal" || s.Unmarshal == nil {
				continue
			}
			rows = append(rows, &row{cas: c, op: "unmarshal", side: s, size: len(s.Input), fn: func(n int) {
				for i := 0; i < n; i++ {
					if _, err := s.Unmarshal(s.Input); err != nil {
						panic(err)
					}
				}
			}})
		}
	}
	for _, rw := range rows {
		rw.n = calibrate(rw.fn, benchtime)
	}
	for _, rw := range rows {
		rw.n = recalibrate(rw.fn, rw.n, benchtime)
	}
	runtime.GC()
	var ms0, ms1 runtime.MemStats
	for r := 0; r < rounds; r++ {
		for _, rw := range rows {
			if r == 0 {
				runtime.ReadMemStats(&ms0)
			}
			c0, t0 := cpuTime(), time.Now()
			rw.fn(rw.n)
			el := time.Since(t0)
			if r == 0 {
				runtime.ReadMemStats(&ms1)
				rw.bytes = float64(ms1.TotalAlloc-ms0.TotalAlloc) / float64(rw.n)
				rw.allocs = float64(ms1.Mallocs-ms0.Mallocs) / float64(rw.n)
			}
			if clock == "cpu" {
				el = cpuTime() - c0
			}
			rw.ns = append(rw.ns, float64(el.Nanoseconds())/float64(rw.n))
		}
	}
	// Release the case's values: the rows keep names, sizes and times.
	for _, rw := range rows {
		rw.fn = nil
	}
	for ci := range cases {
		for si := range cases[ci].Sides {
			s := &cases[ci].Sides[si]
			s.Input, s.Marshal, s.Unmarshal = nil, nil, nil
		}
	}
	return rows
}

// calibrate finds how many calls of fn take about d: one call, then a run sized from it, until a
// run takes at least a tenth of d (the first call also warms caches and pools up).
func calibrate(fn func(n int), d time.Duration) int {
	n := 1
	for {
		t0 := time.Now()
		fn(n)
		el := time.Since(t0)
		if el >= d/10 || n >= 1<<30 {
			return max(1, int(float64(n)*float64(d)/float64(max(el, 1))))
		}
		n = int(min(float64(n)*100, float64(n)*float64(d/10)/float64(max(el, 1))*1.2+1))
	}
}

// recalibrate times n calls of fn again, now that every row has run, and returns the count for d
// from that run. The first pass runs each row on a heap that is still growing: a side that
// allocates a megabyte a call page-faults every page of it there (256 minor faults per call,
// getrusage) and took 3-10x its later time per call, so its count came out 3-20x too small. In
// a full run of 390 rows, 67 of them ran under a third of the benchtime per round, long_string
// unmarshal 2-8 calls (0.4-1.6 ms) per side and round: a single GC mark phase or a preemption in
// such a round moved the side's median by 2-4x (long_string: mpk 0.38-0.44x shamaton in the
// report, about 1.0x over 30 ms runs of the same binary).
func recalibrate(fn func(n int), n int, d time.Duration) int {
	t0 := time.Now()
	fn(n)
	el := time.Since(t0)
	return max(1, int(float64(n)*float64(d)/float64(max(el, 1))))
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// copyingPeers are the MessagePack peers the `any` bar compares against, unless one aliases.
var copyingPeers = []string{"msgp", "vmihailenco", "shamaton"}

func print(rows []*row, rounds int, benchtime time.Duration, clock string, notes []string) {
	fmt.Printf("Medians of %d rounds (%s per side per round, the iteration count fixed once per side), %s, %s/%s, GOMAXPROCS %d. The cases run one at a time (each built, calibrated on a warm heap, timed and dropped, so the heap holds only the case being timed); within a case the sides are interleaved in every round.\n",
		rounds, benchtime, runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0))
	if clock == "cpu" {
		fmt.Printf("Times are the process's CPU time per op (user+system, GC included), not elapsed time.\n")
	}
	fmt.Printf("Ratio: the side's ns/op divided by mpk's in the same table (above 1: mpk is faster). ")
	fmt.Printf("Decoded bytes: \"copy\" when a decoded value kept its content after the input was overwritten, ")
	fmt.Printf("\"zero-copy\" when it changed (its []byte or strings alias the input; such a side is not one of the bar's peers).\n")
	fmt.Printf("On `any` trees with maps, **mpk** is the default (`mpk.Marshal`: string keys sorted, byte-stable output) and ")
	fmt.Printf("**%s** is `EncodeOptions{UnsortedMapKeys: true}` (pairs in Go's iteration order, as every peer writes them): ", bench.UnsortedSide)
	fmt.Printf("the like-for-like row for marshal. Its sidecar rows have the variant %q.\n", unsortedVariant)
	if len(notes) > 0 {
		fmt.Printf("\nNotes:\n\n")
		for _, n := range notes {
			fmt.Printf("- %s\n", n)
		}
	}
	med := map[string]float64{}
	key := func(rw *row, side string) string {
		return rw.cas.Name + "|" + rw.cas.Variant + "|" + rw.op + "|" + side
	}
	for _, rw := range rows {
		med[key(rw, rw.side.Name)] = median(rw.ns)
	}
	// rows of one case are contiguous; marshal before unmarshal
	order := slices.Clone(rows)
	sort.SliceStable(order, func(a, b int) bool {
		ra, rb := order[a], order[b]
		if ra.cas != rb.cas {
			return false
		}
		return ra.op < rb.op
	})
	last := ""
	for _, rw := range order {
		k := key(rw, "")
		if k != last {
			title := rw.cas.Label()
			if rw.cas.Variant != "" {
				title += " (" + rw.cas.Variant + ")"
			}
			if rw.cas.Fallback != "" {
				title += " (generated: build/bench-workloads has no " + rw.cas.Fallback + ")"
			}
			fmt.Printf("\n#### %s, %s (mpk's encoding: %d bytes)\n\n", title, rw.op, sizeOf(rows, rw.cas))
			fmt.Printf("| side | ns/op | MB/s | B/op | allocs/op | ratio vs mpk | decoded bytes |\n|---|---:|---:|---:|---:|---:|---|\n")
			last = k
		}
		ns := med[key(rw, rw.side.Name)]
		base := med[key(rw, "mpk")]
		ratio := "-"
		if base > 0 {
			ratio = fmt.Sprintf("%.2f", ns/base)
		}
		dec := ""
		if rw.op == "unmarshal" {
			dec = "copy"
			if rw.side.Aliases {
				dec = "zero-copy"
			}
		}
		fmt.Printf("| %s | %.0f | %.0f | %.0f | %.0f | %s | %s |\n", sideLabel(rows, rw), ns, float64(rw.size)/ns*1e3,
			rw.bytes, rw.allocs, ratio, dec)
	}

	fmt.Printf("\n#### The bars (same run, medians)\n\n")
	fmt.Printf("`any` trees: mpk against the fastest MessagePack peer that copies what it decodes (%s), bar 1.2x.\n\n", strings.Join(copyingPeers, ", "))
	fmt.Printf("mpk is the default; for marshal of a tree with maps the last columns compare %s (UnsortedMapKeys: no sort, as the peers) too.\n\n", bench.UnsortedSide)
	fmt.Printf("| case | op | fastest copying peer | its ns/op | mpk ns/op | ratio | met | %s ns/op | its ratio | met |\n|---|---|---|---:|---:|---:|---|---:|---:|---|\n", bench.UnsortedSide)
	seen := map[string]bool{}
	met, total, metLike := 0, 0, 0
	for _, rw := range order {
		if rw.cas.Typed || rw.side.Name != "mpk" || seen[key(rw, "")] {
			continue
		}
		seen[key(rw, "")] = true
		best, bestNs := "", 0.0
		for _, o := range rows {
			if o.cas != rw.cas || o.op != rw.op || !slices.Contains(copyingPeers, o.side.Name) || (o.op == "unmarshal" && o.side.Aliases) {
				continue
			}
			if ns := med[key(o, o.side.Name)]; best == "" || ns < bestNs {
				best, bestNs = o.side.Name, ns
			}
		}
		if best == "" {
			continue
		}
		m := med[key(rw, "mpk")]
		total++
		ok := bestNs/m >= 1.2
		if ok {
			met++
		}
		like := ""
		okLike := ok
		if u := med[key(rw, bench.UnsortedSide)]; u > 0 {
			okLike = bestNs/u >= 1.2
			like = fmt.Sprintf(" %.0f | %.2fx | %v", u, bestNs/u, okLike)
		} else {
			like = " - | - | -"
		}
		if okLike {
			metLike++
		}
		fmt.Printf("| %s | %s | %s | %.0f | %.0f | %.2fx | %v |%s |\n", rw.cas.Name+variantSuffix(rw.cas), rw.op, best, bestNs, m, bestNs/m, ok, like)
	}
	fmt.Printf("\n%d of %d `any` rows meet the bar with mpk's default; %d of %d with %s where the tree has maps (like for like).\n",
		met, total, metLike, total, bench.UnsortedSide)
	fmt.Printf("\nStructs (reflection: mpk >= 2x vmihailenco and faster than protobuf; generated: mpkgen >= 1.2x msgp):\n\n| check | value | bar | met |\n|---|---:|---:|---|\n")
	for _, c := range []string{"product", "tweet"} {
		for _, op := range []string{"marshal", "unmarshal"} {
			get := func(side string) float64 { return med[c+"||"+op+"|"+side] }
			check := func(what string, v, bar float64) {
				if v > 0 && v < 1e9 {
					fmt.Printf("| %s %s: %s | %.2fx | >= %.2fx | %v |\n", c, op, what, v, bar, v >= bar)
				}
			}
			check("vmihailenco / mpk", get("vmihailenco")/get("mpk"), 2)
			if get("protobuf") > 0 {
				check("protobuf / mpk", get("protobuf")/get("mpk"), 1)
			}
			check("msgp / mpkgen", get("msgp")/get("mpkgen"), 1.2)
		}
	}
}

// unsortedVariant is the sidecar variant of the UnsortedMapKeys row, so that a reader of the
// sidecar that takes the fastest mpk row per (workload, op, variant) does not take it for the
// default.
const unsortedVariant = "unsorted-keys"

// sideLabel is a side's name in the tables, saying which mpk row is the default where a case
// has both.
func sideLabel(rows []*row, rw *row) string {
	switch rw.side.Name {
	case bench.UnsortedSide:
		return bench.UnsortedSide + " (UnsortedMapKeys)"
	case "mpk":
		if rw.op == "marshal" {
			for _, o := range rows {
				if o.cas == rw.cas && o.side.Name == bench.UnsortedSide {
					return "**mpk (default)**"
				}
			}
		}
	}
	return rw.side.Name
}

func variantSuffix(c *bench.Case) string {
	if c.Variant != "" {
		return " (" + c.Variant + ")"
	}
	return ""
}

func sizeOf(rows []*row, c *bench.Case) int {
	for _, r := range rows {
		if r.cas == c && r.side.Name == "mpk" {
			return r.size
		}
	}
	return 0
}

// The sidecar (bench/README.md, "The sidecar").
type sideRow struct {
	Workload string  `json:"workload"`
	Label    string  `json:"label"`
	Op       string  `json:"op"`
	Variant  string  `json:"variant"`
	Library  string  `json:"library"`
	Kind     string  `json:"kind"`
	Typed    bool    `json:"typed,omitempty"`
	Aliases  bool    `json:"aliases_input,omitempty"`
	NsPerOp  float64 `json:"ns_per_op"`
	MBPerS   float64 `json:"mb_per_s,omitempty"`
	Bytes    int     `json:"bytes,omitempty"`
	BPerOp   float64 `json:"b_per_op"`
	Allocs   float64 `json:"allocs_per_op"`
}

func writeSidecar(path string, rows []*row, quick bool, rounds int, benchtime time.Duration, clock string) {
	cpu := ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				cpu = strings.TrimSpace(l[strings.IndexByte(l, ':')+1:])
				break
			}
		}
	}
	versions := map[string]string{"go": runtime.Version()}
	if bi, ok := debugBuildInfo(); ok {
		for k, v := range bi {
			versions[k] = v
		}
	}
	out := struct {
		Name     string            `json:"name"`
		Title    string            `json:"title"`
		Date     string            `json:"date"`
		Machine  string            `json:"machine"`
		Quick    bool              `json:"quick"`
		Versions map[string]string `json:"versions"`
		Method   string            `json:"method"`
		Rows     []sideRow         `json:"rows"`
	}{
		Name: "go", Title: "Go (mpk.dev/go/mpk)", Date: time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		Machine: fmt.Sprintf("%d cores (%s)", runtime.NumCPU(), cpu), Quick: quick, Versions: versions,
		Method: fmt.Sprintf("medians of %d interleaved rounds, %s per side per round, %s clock", rounds, benchtime, clock),
	}
	for _, rw := range rows {
		ns := median(rw.ns)
		kind := "msgpack"
		switch {
		case strings.HasPrefix(rw.side.Name, "mpk"):
			kind = "mpk"
		case rw.side.Name == "protobuf" || rw.side.Name == "json":
			kind = rw.side.Name
		}
		op := map[string]string{"marshal": "encode", "unmarshal": "decode"}[rw.op]
		variant := rw.cas.Variant
		if rw.side.Name == bench.UnsortedSide {
			variant = strings.TrimPrefix(variant+" "+unsortedVariant, " ")
		}
		aliases := rw.op == "unmarshal" && rw.side.Aliases
		if aliases {
			// a zero-copy decoder is reported apart from the copying ones
			variant = strings.TrimPrefix(variant+" zero-copy", " ")
		}
		lib := rw.side.Name
		if rw.side.Name == "msgp" && !rw.cas.Typed {
			lib = "msgp (runtime)"
		}
		r := sideRow{Workload: rw.cas.Name, Label: rw.cas.Label(), Op: op, Variant: variant, Library: lib, Kind: kind,
			Typed: rw.cas.Typed && (rw.side.Name == "mpkgen" || rw.side.Name == "msgp"), Aliases: aliases,
			NsPerOp: round(ns), MBPerS: round(float64(rw.size) / ns * 1e3), Bytes: rw.size, BPerOp: round(rw.bytes), Allocs: round(rw.allocs)}
		out.Rows = append(out.Rows, r)
	}
	b, err := json.MarshalIndent(out, "", " ")
	must(err)
	must(os.WriteFile(path, append(b, '\n'), 0o644))
}

func round(x float64) float64 {
	if x >= 100 {
		return float64(int64(x + 0.5))
	}
	return float64(int64(x*100+0.5)) / 100
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

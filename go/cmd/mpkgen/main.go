// Command mpkgen writes MessagePack methods for struct types, for use with go:generate:
//
//	//go:generate go run mpk.dev/go/mpk/cmd/mpkgen -type Product,Order
//
// For each named struct type it writes
//
//	func (z *T) MarshalMsg(b []byte) ([]byte, error) // appends z to b
//	func (z *T) UnmarshalMsg(b []byte) ([]byte, error) // reads z from the start of b, returns the rest
//	func (z *T) Msgsize() int // an upper bound of the encoded size (fields it cannot bound count 16)
//
// into one file (-o, default mpk_gen.go) of the package in the current directory (or the
// directory given as the argument). The bytes are those Marshal writes for the same value, and
// UnmarshalMsg accepts what Unmarshal accepts for the struct's fields, with two differences that
// keep the code short: a nil is accepted only for pointers, slices and maps, and a struct is read
// only from a map (or only from an array, for asarray structs). Fields of types the generator does
// not handle are encoded and decoded through mpk's reflection path.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"mpk.dev/go/mpk/internal/gen"
)

func main() {
	typeList := flag.String("type", "", "comma-separated struct type names (default: every struct type in the package)")
	out := flag.String("o", "mpk_gen.go", "output file, relative to the package directory")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: mpkgen [-type T1,T2] [-o file] [dir]")
		flag.PrintDefaults()
	}
	flag.Parse()
	dir := "."
	if flag.NArg() > 0 {
		dir = flag.Arg(0)
	}
	var names []string
	if *typeList != "" {
		names = strings.Split(*typeList, ",")
	}
	if err := gen.Run(dir, names, *out); err != nil {
		fmt.Fprintln(os.Stderr, "mpkgen:", err)
		os.Exit(1)
	}
}

package mpk_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"time"

	"mpk.dev/go/mpk"
)

// The first example of README.md: encode a struct, decode it back, check.
func Example() {
	type Product struct {
		Id     int64    `msgpack:"id"`
		Name   string   `msgpack:"name"`
		Price  int32    `msgpack:"price"`
		Colors []string `msgpack:"colors"`
	}
	in := Product{Id: 191919191919, Name: "Trail shoe", Price: 18900, Colors: []string{"black", "green"}}

	b, err := mpk.Marshal(&in)
	if err != nil {
		log.Fatal(err)
	}
	var out Product
	if err := mpk.Unmarshal(b, &out); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d bytes: %x...\n", len(b), b[:4])
	fmt.Println(out.Name, out.Price, out.Colors)
	// Output:
	// 58 bytes: 84a26964...
	// Trail shoe 18900 [black green]
}

func ExampleUnmarshal_any() {
	b, _ := mpk.Marshal(map[string]any{"n": 1, "big": uint64(1 << 63), "bin": []byte{1}, "f": 1.5})
	var v any
	if err := mpk.Unmarshal(b, &v); err != nil {
		log.Fatal(err)
	}
	m := v.(map[string]any)
	fmt.Printf("%T %T %T %T\n", m["n"], m["big"], m["bin"], m["f"])
	// Output: int64 uint64 []uint8 float64
}

func ExampleDecodeError() {
	var v any
	err := mpk.Unmarshal([]byte{0x92, 0xa1, 'a'}, &v) // an array of 2 whose second element is missing
	var de *mpk.DecodeError
	if errors.As(err, &de) {
		fmt.Println(de.Kind, de.Offset)
		fmt.Println(err)
	}
	// Output:
	// truncated 3
	// mpk: input ends inside a value (truncated) at byte 3
}

func ExampleDecodeOptions() {
	lim := mpk.DefaultLimits()
	lim.Str = 4
	opts := mpk.DecodeOptions{Limits: &lim}
	var s string
	err := opts.Unmarshal([]byte{0xa5, 'h', 'e', 'l', 'l', 'o'}, &s)
	fmt.Println(err)
	// Output: mpk: length over its limit (length_limit) at byte 0
}

func ExampleDecoder() {
	var stream bytes.Buffer
	enc := mpk.NewEncoder(&stream)
	for _, v := range []any{"first", 2, []int{3}} {
		if err := enc.Encode(v); err != nil {
			log.Fatal(err)
		}
	}
	dec := mpk.NewDecoder(&stream)
	for {
		var v any
		err := dec.Decode(&v)
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(v, "ends at", dec.InputOffset())
	}
	// Output:
	// first ends at 6
	// 2 ends at 7
	// [3] ends at 9
}

func ExampleAppendInt() {
	b := mpk.AppendArrayHeader(nil, 2)
	b = mpk.AppendInt(b, -1)
	b = mpk.AppendString(b, "hi")
	fmt.Printf("%x\n", b)

	n, rest, _ := mpk.ReadArrayHeader(b)
	i, rest, _ := mpk.ReadInt(rest)
	s, rest, _ := mpk.ReadStringBytes(rest)
	fmt.Println(n, i, string(s), len(rest))
	// Output:
	// 92ffa26869
	// 2 -1 hi 0
}

func ExampleAppendTime() {
	t := time.Date(2026, 11, 22, 23, 0, 0, 500, time.FixedZone("CET", 3600))
	b := mpk.AppendTime(nil, t)
	back, _, _ := mpk.ReadTime(b)
	fmt.Printf("%x\n%v\n", b, back) // the instant is kept, the zone is not: decoding gives UTC
	// Output:
	// d7ff000007d06b0365e0
	// 2026-11-22 22:00:00.0000005 +0000 UTC
}

type celsius struct{ Degrees float64 }

func ExampleRegisterExt() {
	// Register once, in an init function, before the first Marshal or Unmarshal.
	mpk.RegisterExt(42,
		func(c celsius) ([]byte, error) { return mpk.AppendFloat64(nil, c.Degrees), nil },
		func(b []byte) (celsius, error) {
			f, _, err := mpk.ReadFloat64(b)
			return celsius{f}, err
		})
	b, _ := mpk.Marshal([]any{celsius{21.5}})
	var v any
	_ = mpk.Unmarshal(b, &v)
	fmt.Printf("%x\n%+v\n", b, v)
	// Output:
	// 91c7092acb4035800000000000
	// [{Degrees:21.5}]
}

func ExampleUnsupportedTypeError() {
	_, err := mpk.Marshal(map[string]any{"user": map[string]any{"tags": []any{"a", make(chan int)}}})
	fmt.Println(err)
	var ute *mpk.UnsupportedTypeError
	if errors.As(err, &ute) {
		fmt.Println(ute.Type, ute.Path)
	}
	// Output:
	// mpk: unsupported type: chan int at $["user"]["tags"][1]
	// chan int $["user"]["tags"][1]
}

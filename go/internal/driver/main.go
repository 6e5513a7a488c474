// Command driver is the interop driver spec/drivers/go: it answers the JSON Lines requests of
// spec/README.md ("encode" a typed value, "decode" hex, "stream" hex cut into chunks) with mpk, one
// answer line per request.
package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"

	"mpk.dev/go/mpk"
	"mpk.dev/go/mpk/internal/typed"
)

func main() {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			out.Write(answer(line))
			out.WriteByte('\n')
			out.Flush()
		}
		if err != nil {
			if err != io.EOF {
				fmt.Fprintln(os.Stderr, "driver:", err)
				os.Exit(1)
			}
			return
		}
	}
}

// request is one parsed line.
type request struct {
	encode    *typed.Value
	decode    []byte
	hasDecode bool
	stream    []byte
	hasStream bool
	cuts      []int64
	limits    *mpk.Limits
	strict    bool
}

func answer(line []byte) []byte {
	req, err := parseRequest(line)
	if err != nil {
		return []byte(`{"error":"bad_request"}`)
	}
	if req.encode != nil {
		enc, err := typed.Encode(nil, *req.encode)
		if err != nil {
			return []byte(`{"error":"` + typed.EncodeErrorKind(err) + `"}`)
		}
		return []byte(`{"hex":"` + hex.EncodeToString(enc) + `"}`)
	}
	opts := mpk.DecodeOptions{Limits: req.limits, StrictUTF8: req.strict}
	if req.hasStream {
		return streamAnswer(req, opts)
	}
	var raw mpk.RawMessage
	if err := opts.Unmarshal(req.decode, &raw); err != nil {
		var de *mpk.DecodeError
		if errors.As(err, &de) {
			return []byte(`{"error":"` + de.Kind.String() + `","offset":` + strconv.FormatInt(de.Offset, 10) + `}`)
		}
		return []byte(`{"error":"bad_request"}`)
	}
	v, _, err := typed.Decode(req.decode)
	if err != nil {
		return []byte(`{"error":"bad_request"}`)
	}
	var w bytes.Buffer
	w.WriteString(`{"value":`)
	typed.Canonical(&w, v)
	w.WriteByte('}')
	return w.Bytes()
}

// chunkReader returns its chunks one Read at a time (a chunk longer than the Read's buffer over
// several), then io.EOF.
type chunkReader struct {
	chunks [][]byte
}

func (r *chunkReader) Read(p []byte) (int, error) {
	for len(r.chunks) > 0 && len(r.chunks[0]) == 0 {
		r.chunks = r.chunks[1:]
	}
	if len(r.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.chunks[0])
	r.chunks[0] = r.chunks[0][n:]
	return n, nil
}

// streamAnswer feeds req.stream to an mpk.Decoder through a reader that returns it in chunks split
// at req.cuts, decoding values until io.EOF or an error, and answers the values and the error.
func streamAnswer(req *request, opts mpk.DecodeOptions) []byte {
	cuts := append([]int64(nil), req.cuts...)
	sort.Slice(cuts, func(i, j int) bool { return cuts[i] < cuts[j] })
	r := &chunkReader{}
	var at int64
	for _, c := range append(cuts, int64(len(req.stream))) {
		if c < 0 || c > int64(len(req.stream)) {
			return []byte(`{"error":"bad_request"}`)
		}
		if c > at {
			r.chunks = append(r.chunks, req.stream[at:c])
			at = c
		}
	}
	dec := mpk.NewDecoder(r)
	dec.SetOptions(opts)
	var w bytes.Buffer
	w.WriteString(`{"values":[`)
	for n := 0; ; n++ {
		var raw mpk.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			w.WriteString(`]}`)
			return w.Bytes()
		}
		if err != nil {
			var de *mpk.DecodeError
			if !errors.As(err, &de) {
				return []byte(`{"error":"bad_request"}`)
			}
			w.WriteString(`],"error":"` + de.Kind.String() + `","offset":` + strconv.FormatInt(de.Offset, 10) + `}`)
			return w.Bytes()
		}
		v, _, err := typed.Decode(raw)
		if err != nil {
			return []byte(`{"error":"bad_request"}`)
		}
		if n > 0 {
			w.WriteByte(',')
		}
		typed.Canonical(&w, v)
	}
}

func parseRequest(line []byte) (*request, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if tk, err := dec.Token(); err != nil || tk != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	req := &request{}
	for dec.More() {
		tk, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch tk {
		case "encode":
			v, err := typed.Parse(dec)
			if err != nil {
				return nil, err
			}
			req.encode = &v
		case "decode":
			var s string
			if err := dec.Decode(&s); err != nil {
				return nil, err
			}
			if req.decode, err = typed.ParseHex(s); err != nil {
				return nil, err
			}
			req.hasDecode = true
		case "stream":
			var s string
			if err := dec.Decode(&s); err != nil {
				return nil, err
			}
			if req.stream, err = typed.ParseHex(s); err != nil {
				return nil, err
			}
			req.hasStream = true
		case "cuts":
			if err := dec.Decode(&req.cuts); err != nil {
				return nil, err
			}
		case "limits":
			var m map[string]int64
			if err := dec.Decode(&m); err != nil {
				return nil, err
			}
			lim := mpk.DefaultLimits()
			for k, n := range m {
				if n < 0 {
					return nil, errors.New("negative limit")
				}
				switch k {
				case "depth":
					lim.Depth = uint32(min(n, mpk.DefaultLengthLimit))
				case "str":
					lim.Str = uint32(min(n, mpk.DefaultLengthLimit))
				case "bin":
					lim.Bin = uint32(min(n, mpk.DefaultLengthLimit))
				case "ext":
					lim.Ext = uint32(min(n, mpk.DefaultLengthLimit))
				case "array":
					lim.Array = uint32(min(n, mpk.DefaultLengthLimit))
				case "map":
					lim.Map = uint32(min(n, mpk.DefaultLengthLimit))
				default:
					return nil, errors.New("unknown limit " + k)
				}
			}
			req.limits = &lim
		case "strict_utf8":
			if err := dec.Decode(&req.strict); err != nil {
				return nil, err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, err
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	asked := 0
	for _, b := range []bool{req.encode != nil, req.hasDecode, req.hasStream} {
		if b {
			asked++
		}
	}
	if asked != 1 {
		return nil, errors.New("need exactly one of encode, decode and stream")
	}
	return req, nil
}

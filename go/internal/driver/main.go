// Command driver is the interop driver spec/drivers/go: it answers the JSON Lines requests of
// spec/README.md ("encode" a typed value, "decode" hex) with mpk, one answer line per request.
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
	if (req.encode != nil) == req.hasDecode {
		return nil, errors.New("need exactly one of encode and decode")
	}
	return req, nil
}

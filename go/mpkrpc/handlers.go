package mpkrpc

import (
	"context"
	"fmt"
	"reflect"
	"runtime/debug"
	"sync"

	"mpk.dev/go/mpk"
)

// RawHandler serves a method from its params array as received (one MessagePack array, valid
// until the handler returns: copy it to keep it). Its result is encoded with Marshal (an
// mpk.RawMessage is sent as it is).
type RawHandler func(ctx context.Context, params mpk.RawMessage) (any, error)

// Handlers is a set of handlers by method name, safe for concurrent use; it may serve many
// endpoints.
type Handlers struct {
	mu sync.RWMutex
	m  map[string]*handler
}

type handler struct {
	name     string
	raw      RawHandler
	fn       reflect.Value
	ctxArg   bool
	in       []reflect.Type // argument types after the context
	variadic bool
	result   bool // returns a value before its optional error
	errOut   bool
}

var (
	ctxType = reflect.TypeFor[context.Context]()
	errType = reflect.TypeFor[error]()
)

// Register registers fn, a Go function, as the handler of name. fn may take a context.Context
// first (cancelled when the connection ends; FromContext gives the endpoint), then any arguments
// mpk decodes (a final variadic parameter takes the remaining params); it returns nothing, a
// result, an error, or a result and an error. A request whose params count does not fit gets
// Neovim's "Wrong number of arguments: expecting N but got M"; a param that does not decode into
// its type an error naming it; a returned error or a panic an error response (see Error for
// choosing the error value). Register panics if fn is not such a function. Registering a name
// again replaces its handler.
func (hs *Handlers) Register(name string, fn any) {
	v := reflect.ValueOf(fn)
	t := v.Type()
	if t.Kind() != reflect.Func {
		panic(fmt.Sprintf("mpkrpc: Register(%q): %T is not a function", name, fn))
	}
	h := &handler{name: name, fn: v, variadic: t.IsVariadic()}
	for i := 0; i < t.NumIn(); i++ {
		if i == 0 && t.In(0) == ctxType {
			h.ctxArg = true
			continue
		}
		h.in = append(h.in, t.In(i))
	}
	switch {
	case t.NumOut() == 0:
	case t.NumOut() == 1 && t.Out(0) == errType:
		h.errOut = true
	case t.NumOut() == 1:
		h.result = true
	case t.NumOut() == 2 && t.Out(1) == errType:
		h.result, h.errOut = true, true
	default:
		panic(fmt.Sprintf("mpkrpc: Register(%q): %s must return nothing, a result, an error, or a result and an error", name, t))
	}
	hs.put(name, h)
}

// RegisterRaw registers a raw handler for name.
func (hs *Handlers) RegisterRaw(name string, fn RawHandler) {
	hs.put(name, &handler{name: name, raw: fn})
}

func (hs *Handlers) put(name string, h *handler) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.m == nil {
		hs.m = map[string]*handler{}
	}
	hs.m[name] = h
}

func (hs *Handlers) lookup(name string) *handler {
	hs.mu.RLock()
	defer hs.mu.RUnlock()
	return hs.m[name]
}

// invoke runs the handler on a params array; a panic becomes an error.
func (h *handler) invoke(ctx context.Context, ep *Endpoint, params []byte) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			result, err = nil, fmt.Errorf("mpkrpc: handler %s panicked: %v\n%s", h.name, r, debug.Stack())
		}
	}()
	if h.raw != nil {
		return h.raw(ctx, params)
	}
	n, rest, err := mpk.ReadArrayHeader(params)
	if err != nil {
		return nil, err
	}
	fixed := len(h.in)
	if h.variadic {
		fixed--
	}
	if n < fixed || (!h.variadic && n > fixed) {
		want := fmt.Sprint(len(h.in))
		if h.variadic {
			want = fmt.Sprintf("at least %d", fixed)
		}
		return nil, plainError(fmt.Sprintf("%s of arguments: expecting %s but got %d", "Wrong number", want, n))
	}
	args := make([]reflect.Value, 0, n+1)
	if h.ctxArg {
		args = append(args, reflect.ValueOf(ctx))
	}
	for i := 0; i < n; i++ {
		t := h.in[min(i, len(h.in)-1)]
		if h.variadic && i >= fixed {
			t = t.Elem()
		}
		after, err := mpk.Skip(rest)
		if err != nil {
			return nil, err
		}
		p := reflect.New(t)
		if err := ep.decodeInto(rest[:len(rest)-len(after)], p.Interface()); err != nil {
			return nil, plainError(fmt.Sprintf("%s %d when calling %s, expecting %s: %v", "Wrong type for argument", i+1, h.name, t, err))
		}
		args = append(args, p.Elem())
		rest = after
	}
	out := h.fn.Call(args)
	if h.errOut {
		if e, _ := out[len(out)-1].Interface().(error); e != nil {
			return nil, e
		}
	}
	if h.result {
		return out[0].Interface(), nil
	}
	return nil, nil
}

// plainError is an error message sent as it is (Neovim's capitalised wording).
type plainError string

func (e plainError) Error() string { return string(e) }

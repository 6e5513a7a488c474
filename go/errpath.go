package mpk

import (
	"cmp"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Where a value that Marshal refused sits in the value given to it.
//
// The encoders record nothing about their position while they run: on success that would be pure
// cost. When Marshal fails with an UnsupportedTypeError, a MarshalerError or an
// InvalidTimestampError, locateFailure walks the value again, level by level, and at each level
// asks the same encoders which child fails: the path it returns is the first failing child of
// each level, in the order Marshal writes them (struct fields in declaration order, map keys
// sorted). The walk runs only on that error path and re-encodes at most locateMaxDepth levels.

// locateMaxDepth bounds the walk (each level re-encodes the failing child's subtree).
const locateMaxDepth = 64

// withPath fills in the Path of err when it is one of the errors a value can cause.
func withPath(err error, v any, flags codecFlags) error {
	var path *string
	switch x := err.(type) {
	case *UnsupportedTypeError:
		path = &x.Path
	case *MarshalerError:
		path = &x.Path
	case *InvalidTimestampError:
		path = &x.Path
	}
	if path != nil && *path == "" {
		*path = locateFailure(v, flags)
	}
	return err
}

func locateFailure(v any, flags codecFlags) string {
	var b strings.Builder
	b.WriteString("$")
	cur := reflect.ValueOf(v)
	for depth := 0; ; depth++ {
		for cur.IsValid() && (cur.Kind() == reflect.Interface || cur.Kind() == reflect.Pointer) && !cur.IsNil() &&
			!encodesItself(cur.Type(), flags) {
			cur = cur.Elem()
		}
		if !cur.IsValid() || encodesItself(cur.Type(), flags) {
			break
		}
		if depth == locateMaxDepth {
			b.WriteString("...")
			break
		}
		next, step, inKey := failingChild(cur, flags)
		if step == "" {
			break
		}
		b.WriteString(step)
		if inKey {
			b.WriteString(" (a map key)")
			break
		}
		cur = next
	}
	return b.String()
}

// encodesItself says whether values of t are written by a method, a registered codec or one of
// mpk's own types (the encoder newTypeEncoder picks first), so that their inside is not for the
// walk to look at.
func encodesItself(t reflect.Type, flags codecFlags) bool {
	return selfEncoder(t, flags, true) != nil
}

// encodeFails runs v's encoder into a scratch state.
func encodeFails(v reflect.Value, flags codecFlags) bool {
	if !v.IsValid() {
		return false
	}
	e := &encodeState{flags: flags}
	typeEncoder(v.Type(), flags)(e, v)
	return e.err != nil
}

// failingChild finds the first child of container v whose encoding fails: the child, the step to
// it ("" if none fails), and whether it is a map key that fails.
func failingChild(v reflect.Value, flags codecFlags) (reflect.Value, string, bool) {
	switch v.Kind() {
	case reflect.Struct:
		fields := typeFields(v.Type(), flags)
		for i := range fields.list {
			f := &fields.list[i]
			fv, ok := fieldValue(v, f)
			if !ok || omitted(f, fv) || !encodeFails(fv, flags) {
				continue
			}
			return fv, "." + v.Type().FieldByIndex(f.index).Name, false
		}
	case reflect.Map:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return cmp.Compare(keyStep(a), keyStep(b)) })
		for _, k := range keys {
			if encodeFails(k, flags) {
				return k, keyStep(k), true
			}
			if ev := v.MapIndex(k); encodeFails(ev, flags) {
				return ev, keyStep(k), false
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return reflect.Value{}, "", false // a bin
		}
		for i := 0; i < v.Len(); i++ {
			if ev := v.Index(i); encodeFails(ev, flags) {
				return ev, "[" + strconv.Itoa(i) + "]", false
			}
		}
	}
	return reflect.Value{}, "", false
}

// keyStep writes a map key as Go would: a quoted string (cut at 40 bytes), a number or bool as
// is, anything else by its type. It never calls Interface, so keys reached through unexported
// embedded structs are fine.
func keyStep(k reflect.Value) string {
	for k.Kind() == reflect.Interface && !k.IsNil() {
		k = k.Elem()
	}
	switch k.Kind() {
	case reflect.String:
		s := k.String()
		if len(s) > 40 {
			return "[" + strconv.Quote(s[:40]) + "...]"
		}
		return "[" + strconv.Quote(s) + "]"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "[" + strconv.FormatInt(k.Int(), 10) + "]"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "[" + strconv.FormatUint(k.Uint(), 10) + "]"
	case reflect.Float32, reflect.Float64:
		return "[" + strconv.FormatFloat(k.Float(), 'g', -1, 64) + "]"
	case reflect.Bool:
		return "[" + strconv.FormatBool(k.Bool()) + "]"
	}
	return "[<" + k.Type().String() + " key>]"
}

// pathSuffix is what an error message adds for its path: nothing for the value itself.
func pathSuffix(path string) string {
	if path == "" || path == "$" {
		return ""
	}
	return " at " + path
}

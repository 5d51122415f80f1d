package storetest

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
	"time"
)

var (
	timeType  = reflect.TypeFor[time.Time]()
	bytesKind = reflect.TypeFor[[]byte]()
)

// equal fails the test unless got is want field by field, where times are the same instant and
// got's are in UTC, and nil and empty slices and maps differ.
func equal[T any](t *testing.T, what string, want, got T) {
	t.Helper()
	if d := diff(what, reflect.ValueOf(&want).Elem(), reflect.ValueOf(&got).Elem()); d != "" {
		t.Fatal(d)
	}
}

func diff(path string, want, got reflect.Value) string {
	if want.Type() == timeType {
		w, g := want.Interface().(time.Time), got.Interface().(time.Time)
		if !w.Equal(g) {
			return fmt.Sprintf("%s: want %s, got %s", path, w.UTC().Format(time.RFC3339Nano), g.UTC().Format(time.RFC3339Nano))
		}
		if g.Location() != time.UTC {
			return fmt.Sprintf("%s: got time in %s, want UTC", path, g.Location())
		}
		return ""
	}
	switch want.Kind() {
	case reflect.Pointer, reflect.Interface:
		if want.IsNil() || got.IsNil() {
			if want.IsNil() != got.IsNil() {
				return fmt.Sprintf("%s: want %s, got %s", path, show(want), show(got))
			}
			return ""
		}
		return diff(path, want.Elem(), got.Elem())
	case reflect.Struct:
		for i := range want.NumField() {
			name := want.Type().Field(i).Name
			if d := diff(path+"."+name, want.Field(i), got.Field(i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Slice:
		if want.IsNil() != got.IsNil() {
			return fmt.Sprintf("%s: want %s, got %s (nil and empty differ)", path, show(want), show(got))
		}
		if want.Type().ConvertibleTo(bytesKind) {
			w, g := want.Convert(bytesKind).Bytes(), got.Convert(bytesKind).Bytes()
			if !bytes.Equal(w, g) {
				return fmt.Sprintf("%s: want %q, got %q", path, w, g)
			}
			return ""
		}
		if want.Len() != got.Len() {
			return fmt.Sprintf("%s: want %d items %s, got %d %s", path, want.Len(), show(want), got.Len(), show(got))
		}
		for i := range want.Len() {
			if d := diff(fmt.Sprintf("%s[%d]", path, i), want.Index(i), got.Index(i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Map:
		if want.IsNil() != got.IsNil() || want.Len() != got.Len() {
			return fmt.Sprintf("%s: want %s, got %s (nil and empty differ)", path, show(want), show(got))
		}
		for _, k := range want.MapKeys() {
			g := got.MapIndex(k)
			if !g.IsValid() {
				return fmt.Sprintf("%s: key %v missing; got %s", path, k, show(got))
			}
			if d := diff(fmt.Sprintf("%s[%v]", path, k), want.MapIndex(k), g); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(want.Interface(), got.Interface()) {
		return fmt.Sprintf("%s: want %s, got %s", path, show(want), show(got))
	}
	return ""
}

func show(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Slice, reflect.Map:
		if v.IsNil() {
			return "nil"
		}
	}
	if v.Kind() == reflect.Pointer {
		return "&" + show(v.Elem())
	}
	if v.Type() == timeType {
		return v.Interface().(time.Time).Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("%#v", v.Interface())
}

// ids returns the ids of items, for comparing lists.
func ids[T any](items []T, id func(T) string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = id(it)
	}
	return out
}

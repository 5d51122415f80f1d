package postgres

import (
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// The array parameters of the hot statements (RecordAttempts, the queue's Settle). pgx encodes a []string or a
// []time.Time by boxing each element in an interface, an allocation per element (two for a
// time); these hand pgx a pointer into the slice instead, which boxes for free, and encode
// exactly as those slices do.

// textArray is a text[] parameter.
type textArray []string

func (a textArray) Dimensions() []pgtype.ArrayDimension { return dimensions(a == nil, len(a)) }
func (a textArray) Index(i int) any                     { return (*textElem)(&a[i]) }
func (a textArray) IndexType() any                      { return new(textElem) }

type textElem string

func (e *textElem) TextValue() (pgtype.Text, error) {
	return pgtype.Text{String: string(*e), Valid: true}, nil
}

// timeArray is a timestamptz[] parameter with no NULL.
type timeArray []time.Time

func (a timeArray) Dimensions() []pgtype.ArrayDimension { return dimensions(a == nil, len(a)) }
func (a timeArray) Index(i int) any                     { return (*timeElem)(&a[i]) }
func (a timeArray) IndexType() any                      { return new(timeElem) }

type timeElem time.Time

func (e *timeElem) TimestamptzValue() (pgtype.Timestamptz, error) {
	return pgtype.Timestamptz{Time: time.Time(*e), Valid: true}, nil
}

// nullTimeArray is a timestamptz[] parameter whose nil elements are NULL.
type nullTimeArray []optTime

func (a nullTimeArray) Dimensions() []pgtype.ArrayDimension { return dimensions(a == nil, len(a)) }
func (a nullTimeArray) Index(i int) any                     { return &a[i] }
func (a nullTimeArray) IndexType() any                      { return new(optTime) }

// optTime is a time, or NULL when nil.
type optTime struct{ t *time.Time }

func (e *optTime) TimestamptzValue() (pgtype.Timestamptz, error) {
	if e.t == nil {
		return pgtype.Timestamptz{}, nil
	}
	return pgtype.Timestamptz{Time: *e.t, Valid: true}, nil
}

// tidArray is a tid[] parameter (row versions) with no NULL.
type tidArray []pgtype.TID

func (a tidArray) Dimensions() []pgtype.ArrayDimension { return dimensions(a == nil, len(a)) }
func (a tidArray) Index(i int) any                     { return (*tidElem)(&a[i]) }
func (a tidArray) IndexType() any                      { return new(tidElem) }

type tidElem pgtype.TID

func (e *tidElem) TIDValue() (pgtype.TID, error) { return pgtype.TID(*e), nil }

// int64Array is a bigint[] parameter with no NULL.
type int64Array []int64

func (a int64Array) Dimensions() []pgtype.ArrayDimension { return dimensions(a == nil, len(a)) }
func (a int64Array) Index(i int) any                     { return (*int64Elem)(&a[i]) }
func (a int64Array) IndexType() any                      { return new(int64Elem) }

type int64Elem int64

func (e *int64Elem) Int64Value() (pgtype.Int8, error) {
	return pgtype.Int8{Int64: int64(*e), Valid: true}, nil
}

// dimensions are those of a one-dimension array of n elements; nil is NULL.
func dimensions(null bool, n int) []pgtype.ArrayDimension {
	if null {
		return nil
	}
	return []pgtype.ArrayDimension{{Length: int32(n), LowerBound: 1}}
}

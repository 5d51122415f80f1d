package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookd/hookd"
)

// maxRate is the largest rateLimit / throttleRate: a uint16 in both specs.
const maxRate = 65535

// applicationIn is ApplicationIn of both generations: rateLimit (1.44) and throttleRate (today)
// are one field under two names.
type applicationIn struct {
	Name         *string           `json:"name"`
	UID          *string           `json:"uid"`
	RateLimit    *int64            `json:"rateLimit"`
	ThrottleRate *int64            `json:"throttleRate"`
	Metadata     map[string]string `json:"metadata"`
	// hookd's own (retry_policy.go).
	RetrySchedule  optional[[]float64] `json:"retrySchedule"`
	TimeoutSeconds optional[float64]   `json:"timeoutSeconds"`
}

// policy is the retry policy the body gives.
func (in *applicationIn) policy() policyPatch {
	return policyPatch{schedule: in.RetrySchedule, timeout: in.TimeoutSeconds}
}

// toHookd checks in as Svix does and converts it.
func (in *applicationIn) toHookd() (*hookd.ApplicationIn, error) {
	if in.Name == nil {
		return nil, invalidField("body", "name", "field required")
	}
	out := &hookd.ApplicationIn{Name: *in.Name, Metadata: in.Metadata}
	if in.UID != nil {
		if err := checkUID("uid", *in.UID, appIDPrefix); err != nil {
			return nil, err
		}
		out.UID = *in.UID
	}
	rate, err := oneRate(optionalOf(in.RateLimit), optionalOf(in.ThrottleRate), 1)
	if err != nil {
		return nil, err
	}
	out.ThrottleRate = rate
	if err := in.policy().applyTo(&out.RetrySchedule, &out.AttemptTimeout); err != nil {
		return nil, err
	}
	return out, nil
}

// applicationPatch is ApplicationPatch of both generations: absent fields stay as they are.
type applicationPatch struct {
	Name         optional[string]            `json:"name"`
	UID          optional[string]            `json:"uid"`
	RateLimit    optional[int64]             `json:"rateLimit"`
	ThrottleRate optional[int64]             `json:"throttleRate"`
	Metadata     optional[map[string]string] `json:"metadata"`
	// hookd's own (retry_policy.go).
	RetrySchedule  optional[[]float64] `json:"retrySchedule"`
	TimeoutSeconds optional[float64]   `json:"timeoutSeconds"`
}

// apply returns a's fields with the patch applied. A rate of null or 0 removes the cap (the Go SDK
// v1.44.0 cannot send null in a PATCH, so 0 is its way to say it); uid null removes the uid.
func (p *applicationPatch) apply(a *hookd.Application) (*hookd.ApplicationIn, error) {
	in := &hookd.ApplicationIn{
		Name: a.Name, UID: a.UID, ThrottleRate: a.ThrottleRate, Metadata: a.Metadata,
		RetrySchedule: a.RetrySchedule, AttemptTimeout: a.AttemptTimeout,
	}
	policy := policyPatch{schedule: p.RetrySchedule, timeout: p.TimeoutSeconds}
	if err := policy.applyTo(&in.RetrySchedule, &in.AttemptTimeout); err != nil {
		return nil, err
	}
	if p.Name.Set {
		if p.Name.Null {
			return nil, invalidField("body", "name", "must not be null")
		}
		in.Name = p.Name.Value
	}
	if p.UID.Set {
		in.UID = ""
		if !p.UID.Null {
			if err := checkUID("uid", p.UID.Value, appIDPrefix); err != nil {
				return nil, err
			}
			in.UID = p.UID.Value
		}
	}
	if p.RateLimit.Set || p.ThrottleRate.Set {
		rate, err := oneRate(p.RateLimit, p.ThrottleRate, 0)
		if err != nil {
			return nil, err
		}
		in.ThrottleRate = rate
	}
	if p.Metadata.Set {
		if p.Metadata.Null {
			return nil, invalidField("body", "metadata", "must not be null")
		}
		in.Metadata = p.Metadata.Value
	}
	return in, nil
}

// oneRate reads a rate given as rateLimit or throttleRate (both must agree when both are given);
// null or absent is 0, no cap.
func oneRate(rateLimit, throttleRate optional[int64], lo int64) (int, error) {
	field, v := "throttleRate", throttleRate
	if rateLimit.Set && !rateLimit.Null {
		if throttleRate.Set && !throttleRate.Null && throttleRate.Value != rateLimit.Value {
			return 0, invalidField("body", "throttleRate", "rateLimit and throttleRate are one field under two names; they differ")
		}
		field, v = "rateLimit", rateLimit
	}
	if !v.Set || v.Null {
		return 0, nil
	}
	if v.Value < lo || v.Value > maxRate {
		return 0, invalidField("body", field, "must be a whole number from "+strconv.FormatInt(lo, 10)+" to 65535 (messages per second)")
	}
	return int(v.Value), nil
}

// applicationOut is ApplicationOut as Svix's server writes it: uid and rateLimit left out when
// unset, throttleRate always present (null when unset).
type applicationOut struct {
	UID          *string           `json:"uid,omitempty"`
	Name         string            `json:"name"`
	RateLimit    *int              `json:"rateLimit,omitempty"`
	ThrottleRate *int              `json:"throttleRate"`
	ID           string            `json:"id"`
	CreatedAt    time.Time         `json:"createdAt"`
	UpdatedAt    time.Time         `json:"updatedAt"`
	Metadata     map[string]string `json:"metadata"`
	// hookd's own, null when the application leaves them to the server (retry_policy.go).
	RetrySchedule  []float64 `json:"retrySchedule"`
	TimeoutSeconds *float64  `json:"timeoutSeconds"`
}

// applicationOutV144 is ApplicationOut of Svix 1.44: rateLimit only, left out when unset.
type applicationOutV144 struct {
	UID       *string           `json:"uid,omitempty"`
	Name      string            `json:"name"`
	RateLimit *int              `json:"rateLimit,omitempty"`
	ID        string            `json:"id"`
	CreatedAt time.Time         `json:"createdAt"`
	UpdatedAt time.Time         `json:"updatedAt"`
	Metadata  map[string]string `json:"metadata"`
}

func toApplicationOut(a *hookd.Application, gen generation) any {
	var rate *int
	out := applicationOut{
		Name: a.Name, ID: a.ID, CreatedAt: a.CreatedAt.UTC(), UpdatedAt: a.UpdatedAt.UTC(), Metadata: a.Metadata,
		RetrySchedule: scheduleOut(a.RetrySchedule), TimeoutSeconds: timeoutOut(a.AttemptTimeout),
	}
	if a.UID != "" {
		uid := a.UID
		out.UID = &uid
	}
	if a.ThrottleRate > 0 {
		r := a.ThrottleRate
		rate = &r
	}
	out.RateLimit, out.ThrottleRate = rate, rate
	if out.Metadata == nil {
		out.Metadata = map[string]string{}
	}
	if gen == genV144 {
		return applicationOutV144{
			UID: out.UID, Name: out.Name, RateLimit: rate, ID: out.ID, CreatedAt: out.CreatedAt,
			UpdatedAt: out.UpdatedAt, Metadata: out.Metadata,
		}
	}
	return out
}

// listApplications lists applications (admin only), oldest first or, with order=descending,
// newest first.
func (s *Server) listApplications(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	if err := rc.requireAdmin(); err != nil {
		return err
	}
	opts, err := listOptions(r, iterateApps)
	if err != nil {
		return err
	}
	descending, err := queryOrder(r)
	if err != nil {
		return err
	}
	list := func(o hookd.ListOptions) (*hookd.Page[hookd.Application], error) {
		return s.client.ListApplications(r.Context(), o)
	}
	var page *hookd.Page[hookd.Application]
	if descending {
		page, err = newestFirst(opts, "app_~", list)
	} else {
		page, err = list(opts)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toList(page, func(a *hookd.Application) any { return toApplicationOut(a, rc.gen) }))
	return nil
}

// createApplication creates an application (admin only), 201. A uid already taken is 409, or with
// get_if_exists=true the existing application, 200.
func (s *Server) createApplication(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	if err := rc.requireAdmin(); err != nil {
		return err
	}
	getIfExists, err := queryBool(r, "get_if_exists", false)
	if err != nil {
		return err
	}
	var body applicationIn
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	in, err := body.toHookd()
	if err != nil {
		return err
	}
	if in.UID != "" && getIfExists {
		if app, err := s.client.GetApplication(r.Context(), in.UID); err == nil {
			writeJSON(w, http.StatusOK, toApplicationOut(app, rc.gen))
			return nil
		} else if !errors.Is(err, hookd.ErrNotFound) {
			return err
		}
	}
	app, err := s.client.CreateApplication(r.Context(), in)
	if errors.Is(err, hookd.ErrConflict) {
		if getIfExists { // created meanwhile by another request
			if app, err := s.client.GetApplication(r.Context(), in.UID); err == nil {
				writeJSON(w, http.StatusOK, toApplicationOut(app, rc.gen))
				return nil
			}
		}
		return conflict("An application with that uid already exists.")
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, toApplicationOut(app, rc.gen))
	return nil
}

func (s *Server) getApplication(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	app, err := s.resolveApp(r, rc)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toApplicationOut(app, rc.gen))
	return nil
}

// putApplication replaces the application (200) or, when none has that id or uid, creates it
// (201), with the body's uid or else the path's (unless the path is an app_ id). Admin only.
func (s *Server) putApplication(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	if err := rc.requireAdmin(); err != nil {
		return err
	}
	ref, err := appPathParam(r)
	if err != nil {
		return err
	}
	var body applicationIn
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	in, err := body.toHookd()
	if err != nil {
		return err
	}
	app, err := s.client.GetApplication(r.Context(), ref)
	switch {
	case err == nil:
		if !body.RetrySchedule.Set {
			in.RetrySchedule = app.RetrySchedule
		}
		if !body.TimeoutSeconds.Set {
			in.AttemptTimeout = app.AttemptTimeout
		}
		app, err = s.client.UpdateApplication(r.Context(), app.ID, in)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, toApplicationOut(app, rc.gen))
		return nil
	case !errors.Is(err, hookd.ErrNotFound):
		return err
	}
	if in.UID == "" && !strings.HasPrefix(ref, "app_") {
		in.UID = ref
	}
	app, err = s.client.CreateApplication(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, toApplicationOut(app, rc.gen))
	return nil
}

// patchApplication changes the fields the body names. Admin only.
func (s *Server) patchApplication(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	if err := rc.requireAdmin(); err != nil {
		return err
	}
	app, err := s.resolveApp(r, rc)
	if err != nil {
		return err
	}
	var p applicationPatch
	if err := decodeBody(r, &p); err != nil {
		return err
	}
	in, err := p.apply(app)
	if err != nil {
		return err
	}
	app, err = s.client.UpdateApplication(r.Context(), app.ID, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toApplicationOut(app, rc.gen))
	return nil
}

// deleteApplication deletes the application with everything it owns, 204. Admin only.
func (s *Server) deleteApplication(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	if err := rc.requireAdmin(); err != nil {
		return err
	}
	app, err := s.resolveApp(r, rc)
	if err != nil {
		return err
	}
	if err := s.client.DeleteApplication(r.Context(), app.ID); err != nil {
		return err
	}
	if f, ok := s.cfg.Auth.(appForgetter); ok {
		f.ForgetApp(app.ID) // its tokens went with it
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// queryOrder reads order: ascending (the default, false) or descending (true).
func queryOrder(r *http.Request) (bool, error) {
	switch r.URL.Query().Get("order") {
	case "", "ascending":
		return false, nil
	case "descending":
		return true, nil
	}
	return false, invalidField("query", "order", "must be ascending or descending")
}

// newestFirst reads a list that the store keeps oldest first in the opposite order. Its pages are
// the store's backward pages, reversed: the first starts before sentinel, a key above every id of
// the list; an iterator "-<id>" (opts.Backward) is the store's forward page after <id>.
func newestFirst[T any](opts hookd.ListOptions, sentinel string, list func(hookd.ListOptions) (*hookd.Page[T], error)) (*hookd.Page[T], error) {
	q := opts
	if opts.Backward {
		q.Backward = false
	} else {
		q.Backward = true
		if q.Iterator == "" {
			q.Iterator = sentinel
		}
	}
	p, err := list(q)
	if err != nil {
		return nil, err
	}
	slices.Reverse(p.Data)
	return &hookd.Page[T]{Data: p.Data, Iterator: p.PrevIterator, PrevIterator: p.Iterator, Done: p.PrevIterator == ""}, nil
}

// optional is a PATCH field: Set when the key is present, Null when its value is null.
type optional[T any] struct {
	Set, Null bool
	Value     T
}

func (o *optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" {
		o.Null = true
		return nil
	}
	return json.Unmarshal(b, &o.Value)
}

func optionalOf[T any](p *T) optional[T] {
	if p == nil {
		return optional[T]{}
	}
	return optional[T]{Set: true, Value: *p}
}

package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookd/hookd"
)

// maxDescription bounds an event type's description, as the library does.
const maxDescription = 4096

// eventTypeIn is EventTypeIn (POST) and, without name, EventTypeUpdate (PUT): the same in both
// generations. groupName (sent by the SDKs since before 1.44) and featureFlags (since 1.70) are
// Svix Cloud's; featureFlag, the open-source server's one flag, is the first of featureFlags (see
// eventTypeFlags).
type eventTypeIn struct {
	Name         *string         `json:"name"`
	Description  *string         `json:"description"`
	Archived     bool            `json:"archived"`
	Deprecated   bool            `json:"deprecated"`
	Schemas      json.RawMessage `json:"schemas"`
	FeatureFlag  *string         `json:"featureFlag"`
	FeatureFlags *[]string       `json:"featureFlags"`
	GroupName    *string         `json:"groupName"`
}

// eventTypePatch is EventTypePatch: absent fields stay as they are.
type eventTypePatch struct {
	Description  optional[string]          `json:"description"`
	Archived     optional[bool]            `json:"archived"`
	Deprecated   optional[bool]            `json:"deprecated"`
	Schemas      optional[json.RawMessage] `json:"schemas"`
	FeatureFlag  optional[string]          `json:"featureFlag"`
	FeatureFlags optional[[]string]        `json:"featureFlags"`
	GroupName    optional[string]          `json:"groupName"`
}

// eventTypeOut is EventTypeOut, the same in both generations: featureFlag (the open-source
// server's) and Svix Cloud's featureFlags and groupName, each null when unset. featureFlags is
// left out for the SDKs older than 1.70, which lack it (the Go SDK up to 1.56 refuses a field
// it does not know).
type eventTypeOut struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	Archived     bool            `json:"archived"`
	Deprecated   bool            `json:"deprecated"`
	Schemas      json.RawMessage `json:"schemas"`
	CreatedAt    time.Time       `json:"createdAt"`
	UpdatedAt    time.Time       `json:"updatedAt"`
	FeatureFlag  *string         `json:"featureFlag"`
	FeatureFlags *[]string       `json:"featureFlags,omitempty"`
	GroupName    *string         `json:"groupName"`
}

// eventTypeShape is what an EventTypeOut holds for one request.
type eventTypeShape struct {
	schemas      bool // the schemas, or null
	featureFlags bool // the featureFlags key
}

// shapeOf is the shape of EventTypeOut for r, with the schemas when withSchemas.
func shapeOf(r *http.Request, withSchemas bool) eventTypeShape {
	return eventTypeShape{schemas: withSchemas, featureFlags: !sdkOlderThan(r, 1, 70)}
}

func toEventTypeOut(et *hookd.EventType, shape eventTypeShape) eventTypeOut {
	out := eventTypeOut{
		Name: et.Name, Description: et.Description, Archived: et.Archived, Deprecated: et.Deprecated,
		CreatedAt: et.CreatedAt.UTC(), UpdatedAt: et.UpdatedAt.UTC(),
	}
	if shape.schemas && len(et.Schemas) > 0 && !bytes.Equal(et.Schemas, []byte("null")) {
		out.Schemas = et.Schemas
	}
	flags := et.Flags() // nil, written as null, when there are none
	if len(flags) > 0 {
		out.FeatureFlag = &flags[0]
	}
	if shape.featureFlags {
		out.FeatureFlags = &flags
	}
	if et.GroupName != "" {
		g := et.GroupName
		out.GroupName = &g
	}
	return out
}

// visible reports whether the caller may see et (Principal.SeesEventType).
func (rc *reqCtx) visible(et *hookd.EventType) bool { return rc.principal.SeesEventType(et) }

// listEventTypes lists event types by name (Svix lists them by name whatever order says).
func (s *Server) listEventTypes(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	opts, err := listOptions(r, iterateEventTypes)
	if err != nil {
		return err
	}
	if _, err := queryOrder(r); err != nil {
		return err
	}
	includeArchived, err := queryBool(r, "include_archived", false)
	if err != nil {
		return err
	}
	withContent, err := queryBool(r, "with_content", false)
	if err != nil {
		return err
	}
	page, err := s.client.ListEventTypes(r.Context(), includeArchived, opts)
	if err != nil {
		return err
	}
	if rc.principal.AppID != "" {
		kept := page.Data[:0]
		for _, et := range page.Data {
			if rc.visible(&et) {
				kept = append(kept, et)
			}
		}
		page.Data = kept
	}
	writeJSON(w, http.StatusOK, toList(page, func(et *hookd.EventType) eventTypeOut { return toEventTypeOut(et, shapeOf(r, withContent)) }))
	return nil
}

// createEventType creates an event type, or replaces an archived one of that name (201). An
// unarchived one of that name is 409 event_type_exists. Admin only.
func (s *Server) createEventType(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	if err := rc.requireAdmin(); err != nil {
		return err
	}
	var in eventTypeIn
	if err := decodeBody(r, &in); err != nil {
		return err
	}
	if in.Name == nil {
		return invalidField("body", "name", "field required")
	}
	if err := checkSvixName("body", "name", *in.Name); err != nil {
		return err
	}
	et, err := in.toHookd(*in.Name)
	if err != nil {
		return err
	}
	out, _, err := s.writeEventType(r, et.Name, func(cur *hookd.EventType) (*hookd.EventType, error) {
		if cur != nil && !cur.Archived {
			return nil, &apiError{http.StatusConflict, "event_type_exists", "An event type with this name already exists."}
		}
		return et, nil
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, toEventTypeOut(out, shapeOf(r, true)))
	return nil
}

func (s *Server) getEventType(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	name, err := eventTypePathParam(r)
	if err != nil {
		return err
	}
	et, err := s.client.GetEventType(r.Context(), name)
	if err != nil {
		return err
	}
	if !rc.visible(et) {
		return notFound("Event type")
	}
	writeJSON(w, http.StatusOK, toEventTypeOut(et, shapeOf(r, true)))
	return nil
}

// putEventType replaces the event type (200) or creates it (201). Admin only.
func (s *Server) putEventType(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	if err := rc.requireAdmin(); err != nil {
		return err
	}
	name, err := eventTypePathParam(r)
	if err != nil {
		return err
	}
	var in eventTypeIn
	if err := decodeBody(r, &in); err != nil {
		return err
	}
	et, err := in.toHookd(name)
	if err != nil {
		return err
	}
	out, created, err := s.writeEventType(r, name, func(*hookd.EventType) (*hookd.EventType, error) { return et, nil })
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, toEventTypeOut(out, shapeOf(r, true)))
	return nil
}

// patchEventType changes the fields the body names. Admin only.
func (s *Server) patchEventType(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	if err := rc.requireAdmin(); err != nil {
		return err
	}
	name, err := eventTypePathParam(r)
	if err != nil {
		return err
	}
	var p eventTypePatch
	if err := decodeBody(r, &p); err != nil {
		return err
	}
	out, _, err := s.writeEventType(r, name, func(cur *hookd.EventType) (*hookd.EventType, error) {
		if cur == nil {
			return nil, notFound("Event type")
		}
		return p.apply(cur)
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toEventTypeOut(out, shapeOf(r, true)))
	return nil
}

// deleteEventType archives the event type or, with expunge=true, deletes it (204). Admin only.
func (s *Server) deleteEventType(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	if err := rc.requireAdmin(); err != nil {
		return err
	}
	name, err := eventTypePathParam(r)
	if err != nil {
		return err
	}
	expunge, err := queryBool(r, "expunge", false)
	if err != nil {
		return err
	}
	if err := s.client.DeleteEventType(r.Context(), name, expunge); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// writeEventType reads the event type called name (nil when there is none), lets change decide
// what to write, and writes it, in one transaction. created is true when none existed.
func (s *Server) writeEventType(r *http.Request, name string, change func(cur *hookd.EventType) (*hookd.EventType, error)) (out *hookd.EventType, created bool, err error) {
	ctx := r.Context()
	now := time.Now().UTC().Truncate(time.Microsecond) // the stores' precision: the answer is what a read returns
	err = s.client.Store().InTx(ctx, func(tx hookd.Tx) error {
		cur, err := tx.GetEventType(ctx, name)
		switch {
		case errors.Is(err, hookd.ErrNotFound):
			cur, created = nil, true
		case err != nil:
			return err
		}
		next, err := change(cur)
		if err != nil {
			return err
		}
		et := *next
		et.Name, et.CreatedAt, et.UpdatedAt = name, now, now
		if cur != nil {
			et.CreatedAt = cur.CreatedAt
		}
		if err := tx.UpsertEventType(ctx, &et); err != nil {
			return err
		}
		out, err = tx.GetEventType(ctx, name)
		return err
	})
	return out, created, err
}

// toHookd checks the body of a POST or PUT and returns the event type it describes.
func (in *eventTypeIn) toHookd(name string) (*hookd.EventType, error) {
	if in.Description == nil {
		return nil, invalidField("body", "description", "field required")
	}
	if err := checkDescription(*in.Description); err != nil {
		return nil, err
	}
	et := &hookd.EventType{Name: name, Description: *in.Description, Archived: in.Archived, Deprecated: in.Deprecated}
	schemas, err := checkSchemas(in.Schemas)
	if err != nil {
		return nil, err
	}
	et.Schemas = schemas
	flags, _, err := eventTypeFlags(optionalOf(in.FeatureFlag), optionalOf(in.FeatureFlags))
	if err != nil {
		return nil, err
	}
	setFlags(et, flags)
	if in.GroupName != nil {
		if err := checkSvixName("body", "groupName", *in.GroupName); err != nil {
			return nil, err
		}
		et.GroupName = *in.GroupName
	}
	return et, nil
}

// apply returns cur with the patch applied.
func (p *eventTypePatch) apply(cur *hookd.EventType) (*hookd.EventType, error) {
	et := *cur
	if p.Description.Set {
		if p.Description.Null {
			return nil, invalidField("body", "description", "must not be null")
		}
		if err := checkDescription(p.Description.Value); err != nil {
			return nil, err
		}
		et.Description = p.Description.Value
	}
	if p.Archived.Set {
		if p.Archived.Null {
			return nil, invalidField("body", "archived", "must not be null")
		}
		et.Archived = p.Archived.Value
	}
	if p.Deprecated.Set {
		if p.Deprecated.Null {
			return nil, invalidField("body", "deprecated", "must not be null")
		}
		et.Deprecated = p.Deprecated.Value
	}
	if p.Schemas.Set {
		et.Schemas = nil
		if !p.Schemas.Null {
			schemas, err := checkSchemas(p.Schemas.Value)
			if err != nil {
				return nil, err
			}
			et.Schemas = schemas
		}
	}
	flags, set, err := eventTypeFlags(p.FeatureFlag, p.FeatureFlags)
	if err != nil {
		return nil, err
	}
	if set {
		setFlags(&et, flags)
	}
	if p.GroupName.Set {
		et.GroupName = ""
		if !p.GroupName.Null {
			if err := checkSvixName("body", "groupName", p.GroupName.Value); err != nil {
				return nil, err
			}
			et.GroupName = p.GroupName.Value
		}
	}
	return &et, nil
}

// eventTypeFlags reads an event type's feature flags, given as featureFlag (the open-source
// server's one flag), featureFlags (Svix Cloud's list of at least one distinct flag), or both, in
// which case featureFlag must be the first of featureFlags. One flag given alone is the list of
// that flag; null is no flags. set is false when neither field was given.
func eventTypeFlags(one optional[string], list optional[[]string]) (flags []string, set bool, err error) {
	if one.Set && !one.Null {
		if err := checkSvixName("body", "featureFlag", one.Value); err != nil {
			return nil, false, err
		}
		flags = []string{one.Value}
	}
	if list.Set && !list.Null {
		if len(list.Value) == 0 {
			return nil, false, invalidField("body", "featureFlags", "must hold at least one flag, or be null")
		}
		if len(list.Value) > maxNameList {
			return nil, false, invalidField("body", "featureFlags", tooManyNames)
		}
		seen := make(map[string]bool, len(list.Value))
		for _, f := range list.Value {
			if err := checkSvixName("body", "featureFlags", f); err != nil {
				return nil, false, err
			}
			if seen[f] {
				return nil, false, invalidField("body", "featureFlags", "holds "+strconv.Quote(f)+" twice")
			}
			seen[f] = true
		}
		if flags != nil && flags[0] != list.Value[0] {
			return nil, false, invalidField("body", "featureFlag", "featureFlag is the first of featureFlags; they differ")
		}
		flags = slices.Clone(list.Value)
	}
	return flags, one.Set || list.Set, nil
}

// setFlags gives et the feature flags, replacing any it had.
func setFlags(et *hookd.EventType, flags []string) {
	et.FeatureFlags, et.FeatureFlag = flags, ""
	if len(flags) > 0 {
		et.FeatureFlag = flags[0]
	}
}

// checkSvixName checks an event type name, feature flag or group name by hookd's one rule for
// event type names (hookd.CheckEventTypeName).
func checkSvixName(where, field, v string) error {
	var ve *hookd.ValidationError
	if err := hookd.CheckEventTypeName(field, v); errors.As(err, &ve) {
		return invalidField(where, field, ve.Reason)
	}
	return nil
}

func eventTypePathParam(r *http.Request) (string, error) {
	name := r.PathValue("event_type_name")
	if err := checkSvixName("path", "event_type_name", name); err != nil {
		return "", err
	}
	return name, nil
}

// checkDescription refuses what Svix refuses (the control characters 0x00 to 0x08) and more than
// maxDescription bytes.
func checkDescription(d string) error {
	if len(d) > maxDescription {
		return invalidField("body", "description", "at most "+strconv.Itoa(maxDescription)+" bytes")
	}
	if strings.ContainsFunc(d, func(c rune) bool { return c <= 0x08 }) {
		return invalidField("body", "description", "control characters 0x00-0x08 are not allowed")
	}
	return nil
}

package ui

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/server"
)

// catalogueEntry is one event type as the catalogue shows it.
type catalogueEntry struct {
	hookd.EventType
	Schemas []schemaVersion // newest first
	Example string          // the example send-example sends; "" for none
}

// schemaVersion is one version of an event type's schema, indented.
type schemaVersion struct {
	Version, Schema string
}

// eventTypesPage is the event type catalogue: each event type the token may see (on the portal,
// the feature flags hide the rest, as the API does), with its description, schemas and example.
func (h *Handler) eventTypesPage(q *req) error {
	app, err := h.client.GetApplication(q.ctx, q.r.PathValue("app"))
	if err != nil {
		return err
	}
	types, err := h.eventTypes(q)
	if err != nil {
		return err
	}
	entries := make([]catalogueEntry, 0, len(types))
	groups := false
	for _, et := range types {
		e := catalogueEntry{EventType: et}
		var byVersion map[string]json.RawMessage
		if len(et.Schemas) > 0 && json.Unmarshal(et.Schemas, &byVersion) == nil {
			for v, raw := range byVersion {
				text, _ := renderPayload(raw)
				e.Schemas = append(e.Schemas, schemaVersion{Version: v, Schema: text})
			}
			slices.SortFunc(e.Schemas, func(a, b schemaVersion) int { return server.NewerSchemaFirst(a.Version, b.Version) })
		}
		if ex := server.SchemaExample(et.Schemas); ex != nil {
			e.Example, _ = renderPayload(ex)
		}
		groups = groups || et.GroupName != ""
		entries = append(entries, e)
	}
	h.render(q.w, q.r, http.StatusOK, "event-types", q.data(map[string]any{
		"Title": "Event types", "App": app, "Types": entries, "Groups": groups,
	}))
	return nil
}

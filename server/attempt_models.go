package server

import (
	"net/http"
	"time"

	"github.com/hookd/hookd"
)

// msgStatus is Svix's MessageStatus.
type msgStatus int

const (
	msgSuccess msgStatus = 0 // delivered
	msgPending msgStatus = 1 // not attempted yet
	msgFail    msgStatus = 2 // failed for good (or cancelled)
	msgSending msgStatus = 3 // failed, and a retry is scheduled
)

// text is the status's MessageStatusText (today's generation).
func (s msgStatus) text() string {
	switch s {
	case msgSuccess:
		return "success"
	case msgPending:
		return "pending"
	case msgSending:
		return "sending"
	}
	return "fail"
}

// deliveryStatus is the MessageStatus of a delivery.
func deliveryStatus(d *hookd.Delivery) msgStatus {
	switch d.Status {
	case hookd.DeliveryDelivered:
		return msgSuccess
	case hookd.DeliveryPending:
		if d.Attempts > 0 {
			return msgSending
		}
		return msgPending
	}
	return msgFail
}

// attemptStatus is the MessageStatus of an attempt: each attempt succeeded or failed.
func attemptStatus(a *hookd.Attempt) msgStatus {
	if a.Success {
		return msgSuccess
	}
	return msgFail
}

// queryMsgStatus reads the status filter (a MessageStatus); nil when absent.
func queryMsgStatus(r *http.Request) (*msgStatus, error) {
	if r.URL.Query().Get("status") == "" {
		return nil, nil
	}
	n, err := queryInt(r, "status", 0, 0, 3)
	if err != nil {
		return nil, invalidField("query", "status", "must be 0 (success), 1 (pending), 2 (fail) or 3 (sending)")
	}
	s := msgStatus(n)
	return &s, nil
}

// queryStatusCodeClass reads status_code_class (0, 100, 200, 300, 400 or 500); -1 when absent.
func queryStatusCodeClass(r *http.Request) (int, error) {
	if r.URL.Query().Get("status_code_class") == "" {
		return -1, nil
	}
	n, err := queryInt(r, "status_code_class", 0, 0, 500)
	if err != nil || n%100 != 0 {
		return 0, invalidField("query", "status_code_class", "must be 0 (no response), 100, 200, 300, 400 or 500")
	}
	return n, nil
}

// inStatusCodeClass reports whether an HTTP status is in a class (0: no response, 0 to 99).
func inStatusCodeClass(code, class int) bool {
	return code >= class && code < class+100 && (class > 0 || code < 100)
}

// attemptTrigger is Svix's MessageAttemptTriggerType: 0 scheduled, 1 manual.
func attemptTrigger(t hookd.AttemptTrigger) int {
	if t == hookd.TriggerManual {
		return 1
	}
	return 0
}

// attemptOut is today's MessageAttemptOut.
type attemptOut struct {
	EndpointID         string    `json:"endpointId"`
	ID                 string    `json:"id"`
	MsgID              string    `json:"msgId"`
	Response           string    `json:"response"`
	ResponseDurationMs int64     `json:"responseDurationMs"`
	ResponseStatusCode int       `json:"responseStatusCode"`
	Status             msgStatus `json:"status"`
	StatusText         string    `json:"statusText"`
	Timestamp          time.Time `json:"timestamp"`
	TriggerType        int       `json:"triggerType"`
	URL                string    `json:"url"`
	Msg                *msgOut   `json:"msg,omitempty"`
}

// attemptOutV144 is MessageAttemptOut (and MessageAttemptEndpointOut) of the 1.44 generation: no
// statusText.
type attemptOutV144 struct {
	EndpointID         string    `json:"endpointId"`
	ID                 string    `json:"id"`
	MsgID              string    `json:"msgId"`
	Response           string    `json:"response"`
	ResponseDurationMs int64     `json:"responseDurationMs"`
	ResponseStatusCode int       `json:"responseStatusCode"`
	Status             msgStatus `json:"status"`
	Timestamp          time.Time `json:"timestamp"`
	TriggerType        int       `json:"triggerType"`
	URL                string    `json:"url"`
	Msg                *msgOut   `json:"msg,omitempty"`
}

// toAttemptOut returns the attempt in the caller's generation; without content, response is "".
// msg, when not nil, is the attempt's message (with_msg), written in both generations: the 1.44
// SDKs read it too.
func toAttemptOut(gen generation, a *hookd.Attempt, withContent bool, msg *msgOut) any {
	resp := a.Response
	if !withContent {
		resp = ""
	}
	st := attemptStatus(a)
	if gen == genV144 {
		return attemptOutV144{
			EndpointID: a.EndpointID, ID: a.ID, MsgID: a.MessageID, Response: resp,
			ResponseDurationMs: a.Duration.Milliseconds(), ResponseStatusCode: a.StatusCode,
			Status: st, Timestamp: a.At.UTC(), TriggerType: attemptTrigger(a.Trigger), URL: a.URL, Msg: msg,
		}
	}
	return attemptOut{
		EndpointID: a.EndpointID, ID: a.ID, MsgID: a.MessageID, Response: resp,
		ResponseDurationMs: a.Duration.Milliseconds(), ResponseStatusCode: a.StatusCode,
		Status: st, StatusText: st.text(), Timestamp: a.At.UTC(), TriggerType: attemptTrigger(a.Trigger), URL: a.URL,
		Msg: msg,
	}
}

// msgEndpointOut is MessageEndpointOut as Svix's server writes it: an endpoint a message went to
// (every field of endpointOutCommon), with the state of that delivery.
type msgEndpointOut struct {
	endpointOutCommon
	ID          string     `json:"id"`
	Status      msgStatus  `json:"status"`
	StatusText  string     `json:"statusText"`
	NextAttempt *time.Time `json:"nextAttempt"`
}

// msgEndpointOutV144 is MessageEndpointOut of the 1.44 generation: filterTypes and rateLimit, with
// version, and no statusText.
type msgEndpointOutV144 struct {
	Channels    []string   `json:"channels"`
	CreatedAt   time.Time  `json:"createdAt"`
	Description string     `json:"description"`
	Disabled    bool       `json:"disabled"`
	FilterTypes []string   `json:"filterTypes"`
	ID          string     `json:"id"`
	NextAttempt *time.Time `json:"nextAttempt"`
	RateLimit   *int       `json:"rateLimit"`
	Status      msgStatus  `json:"status"`
	UID         *string    `json:"uid"`
	UpdatedAt   time.Time  `json:"updatedAt"`
	URL         string     `json:"url"`
	Version     int        `json:"version"`
}

func toMsgEndpointOut(gen generation, d *hookd.Delivery, ep *hookd.Endpoint) any {
	st := deliveryStatus(d)
	var next *time.Time
	if d.Status == hookd.DeliveryPending {
		next = utcOrNil(d.NextAttemptAt)
	}
	if gen == genV144 {
		return msgEndpointOutV144{
			Channels: nullList(ep.Channels), CreatedAt: ep.CreatedAt.UTC(), Description: ep.Description,
			Disabled: ep.Disabled, FilterTypes: nullList(ep.EventTypes), ID: ep.ID, NextAttempt: next,
			RateLimit: endpointRate(ep), Status: st, UID: nullString(ep.UID), UpdatedAt: ep.UpdatedAt.UTC(), URL: ep.URL,
			Version: max(ep.Version, 1),
		}
	}
	return msgEndpointOut{endpointOutCommon: endpointCommonOf(ep), ID: ep.ID, Status: st, StatusText: st.text(), NextAttempt: next}
}

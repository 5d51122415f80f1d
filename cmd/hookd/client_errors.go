package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"

	svix "github.com/svix/svix-webhooks/go"
)

// This file turns the API's and the SDK's errors into the client commands' errors and hints.

// fail turns an error of the SDK into the command's error: an API error with its status, code
// and detail, or a transport error, each with a hint. op names what was attempted.
func (c *conn) fail(op string, err error) error {
	if errors.Is(err, context.Canceled) {
		return failf("", "%s: interrupted", op)
	}
	var se *svix.Error
	if errors.As(err, &se) && se.Status() != 0 {
		return apiFailure(op, se.Status(), se.Body(), err)
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		waited := ""
		if c.waited != nil && !c.waited.up.Load() {
			waited = fmt.Sprintf(" (for %s)", c.waited.wait)
		}
		return failf(fmt.Sprintf("is hookd serve running at %s? (set --url / --server or %s)", c.base, envURL), "%s: connection refused by %s%s", op, c.base, waited)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return failf(fmt.Sprintf("the server at %s did not answer within %s; is it overloaded or the wrong address?", c.base, requestTimeout), "%s: timed out", op)
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return failf("check the host name in --url / --server / "+envURL, "%s: cannot resolve %s: %v", op, dns.Name, dns.Err)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return failf(fmt.Sprintf("is hookd serve running at %s? (set --url / --server or %s)", c.base, envURL), "%s: %v", op, ue.Err)
	}
	return failf("", "%s: %v", op, err)
}

// apiFailure describes an answer of the API that is not a success, or a success the SDK could
// not read.
func apiFailure(op string, status int, body []byte, err error) error {
	if status < 300 {
		return failf("the server's answer does not match the Svix API the client speaks; is the server URL a hookd server of the same version?", "%s: unexpected response (%d): %v", op, status, err)
	}
	code, detail := errorBody(body)
	msg := fmt.Sprintf("%s: %d %s", op, status, http.StatusText(status))
	if code != "" {
		msg += " (" + code + ")"
	}
	if detail != "" {
		msg += ": " + detail
	}
	return &exitError{code: exitFailure, msg: msg, hint: errorHint(status, code), status: status}
}

// errorHint says what to do about an API error.
func errorHint(status int, code string) string {
	switch {
	case code == "endpoint_disabled":
		return `enable the endpoint first: "hookd endpoint enable APP EP"`
	case status == http.StatusUnauthorized:
		return "check --token / " + envToken
	case status == http.StatusForbidden:
		return "this token may not do that; use an admin token (--token / " + envToken + ")"
	case status == http.StatusNotFound:
		return `check the id or uid ("hookd app list", "hookd endpoint list APP", "hookd messages APP")`
	case status == http.StatusConflict:
		return "an entity with that uid, event id or name exists already"
	case status == http.StatusRequestEntityTooLarge:
		return "the payload is larger than the server accepts"
	case status == http.StatusUnprocessableEntity:
		return "the server rejected the field named above; the command's --help describes it"
	case status == http.StatusTooManyRequests:
		return "the server is rate limiting; try again shortly"
	case status == http.StatusServiceUnavailable:
		return "the server's database cannot be reached just now, and nothing was written: try again; if it lasts, hookd serve's log says why"
	case status >= 500:
		return "the server failed; its log has the details"
	}
	return ""
}

// errorBody reads Svix's error body: {"code", "detail"}, or a 422's {"detail": [{loc, msg}]}.
func errorBody(body []byte) (code, detail string) {
	var b struct {
		Code   string          `json:"code"`
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &b) != nil {
		s := strings.TrimSpace(string(body))
		if len(s) > 200 {
			s = s[:200] + "..."
		}
		return "", s
	}
	var s string
	if json.Unmarshal(b.Detail, &s) == nil {
		return b.Code, s
	}
	var fields []struct {
		Loc []any  `json:"loc"`
		Msg string `json:"msg"`
	}
	if json.Unmarshal(b.Detail, &fields) == nil {
		var parts []string
		for _, f := range fields {
			loc := make([]string, 0, len(f.Loc))
			for _, l := range f.Loc {
				loc = append(loc, fmt.Sprint(l))
			}
			parts = append(parts, strings.Join(loc, ".")+": "+f.Msg)
		}
		if b.Code == "" {
			b.Code = "validation_error"
		}
		return b.Code, strings.Join(parts, "; ")
	}
	return b.Code, string(b.Detail)
}

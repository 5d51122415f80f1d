package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/hookd/hookd"
)

// maxNameList bounds the distinct names of a list of event types or feature flags: a list filter's
// event_types, an endpoint's eventTypes (filterTypes) and an event type's featureFlags. Svix's
// server sets no bound; this one is far above what a caller means to send and keeps a request's
// work small.
const maxNameList = 1000

// tooManyNames is the reason a list of more than maxNameList names is refused.
var tooManyNames = "at most " + strconv.Itoa(maxNameList) + " distinct names"

// listQuery is the query of the message and attempt lists: paging, with_content and the filters
// they share.
type listQuery struct {
	opts          hookd.ListOptions
	withContent   bool
	status        *msgStatus // nil: any (always nil unless filterStatus was asked for)
	codeClass     int        // -1: any (always -1 unless filterCodeClass was asked for)
	eventTypes    []string
	channel       string
	tag           string // always "" unless filterTag was asked for
	before, after *time.Time
}

// listFilters names the filters of a listQuery that only some lists read.
type listFilters uint8

const (
	filterStatus    listFilters = 1 << iota // status, a MessageStatus
	filterCodeClass                         // status_code_class
	filterTag                               // tag, a message tag
)

// readListQuery reads limit, iterator (of kind), with_content, the filters named in extra but
// tag, event_types, channel, tag when named, before and after, in that order: the first bad one
// is the 422.
func readListQuery(r *http.Request, kind iteratorKind, extra listFilters) (*listQuery, error) {
	q := &listQuery{codeClass: -1}
	var err error
	if q.opts, err = listOptions(r, kind); err != nil {
		return nil, err
	}
	if q.withContent, err = queryBool(r, "with_content", true); err != nil {
		return nil, err
	}
	if extra&filterStatus != 0 {
		if q.status, err = queryMsgStatus(r); err != nil {
			return nil, err
		}
	}
	if extra&filterCodeClass != 0 {
		if q.codeClass, err = queryStatusCodeClass(r); err != nil {
			return nil, err
		}
	}
	if q.eventTypes, err = queryEventTypeSet(r); err != nil {
		return nil, err
	}
	if q.channel, err = queryChannelName(r); err != nil {
		return nil, err
	}
	if extra&filterTag != 0 {
		if q.tag, err = queryTag(r); err != nil {
			return nil, err
		}
	}
	if q.before, q.after, err = queryBeforeAfter(r); err != nil {
		return nil, err
	}
	return q, nil
}

package sqlstore

import "github.com/hookd/hookd"

// Conflict returns err as a *hookd.ConflictError when cols, the columns of the unique key err says
// is taken (each store reads them from its driver's error), name one: the key is named by its
// last column, id or uid (an endpoint's uid is unique within its application: (app_id, uid)), with
// the entity's id or uid as the value. With no columns err comes back as it is.
func Conflict(err error, cols []string, entity, id, uid string) error {
	if len(cols) == 0 {
		return err
	}
	ce := &hookd.ConflictError{Entity: entity, Field: cols[len(cols)-1], Err: err}
	switch ce.Field {
	case "id":
		ce.Value = id
	case "uid":
		ce.Value = uid
	}
	return ce
}

// Package gosdk drives a real hookd API with the official Svix Go SDK v1.99.1, whose models decode
// with plain encoding/json: the fields hookd writes must be the ones that SDK reads (filterTypes,
// rateLimit, version), or a read-modify-write silently drops an endpoint's filter. It is a module
// of its own so that the main module can keep requiring the SDK v1.44.0.
package gosdk

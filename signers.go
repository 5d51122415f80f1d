package hookd

import (
	"strings"
	"sync"

	"github.com/hookd/hookd/signature"
)

// maxCachedSigners bounds a signerCache: past it the cache starts over, so that keys rotated
// away do not stay in memory for the life of the process.
const maxCachedSigners = 4096

// signerCache keeps the signers of the active keys the workers sign with, so that a delivery
// reuses its endpoint's parsed keys and HMAC states instead of decoding the secrets and building
// the hashes again. A key set is its secrets in order; a rotation makes a new one. Safe for
// concurrent use.
type signerCache struct {
	mu     sync.Mutex
	webhk  map[string]*signature.Signer
	stripe map[string]*signature.StripeSigner
}

// cacheKey joins secrets into one map key. NUL appears in no secret.
func cacheKey(secrets []string) string { return strings.Join(secrets, "\x00") }

// webhook returns the Standard Webhooks signer of secrets.
func (c *signerCache) webhook(secrets []string) (*signature.Signer, error) {
	return cached(c, &c.webhk, secrets, signature.NewSigner)
}

// stripeSigner returns the Stripe-shaped signer of secrets.
func (c *signerCache) stripeSigner(secrets []string) (*signature.StripeSigner, error) {
	return cached(c, &c.stripe, secrets, signature.NewStripeSigner)
}

// cached returns m's signer of secrets, made by build and kept on first use. A secret build
// refuses is not kept.
func cached[S any](c *signerCache, m *map[string]*S, secrets []string, build func(...string) (*S, error)) (*S, error) {
	key := cacheKey(secrets)
	c.mu.Lock()
	s, ok := (*m)[key]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	s, err := build(secrets...)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if *m == nil || len(*m) >= maxCachedSigners {
		*m = make(map[string]*S)
	}
	(*m)[key] = s
	return s, nil
}

package hookd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hookd/hookd/signature"
)

// CheckSecret reports whether secret can sign for an endpoint with scheme (whsec_ or whsk_ for the
// Standard Webhooks schemes, any secret of 16 characters or more but a whsk_ key for the
// Stripe-shaped ones): a *ValidationError for the field "secret" otherwise.
func CheckSecret(secret string, scheme SignatureScheme) error {
	var err error
	if scheme == SchemeStripe || scheme == SchemeEnvelope {
		if strings.HasPrefix(secret, "whsk_") {
			// The receiver would need the private key itself to check the HMAC.
			return invalid("secret", "a whsk_ ed25519 key cannot sign the Stripe-shaped scheme, which is an HMAC: use a whsec_ secret")
		}
		_, err = signature.NewStripeSigner(secret)
	} else {
		_, err = signature.NewSigner(secret)
	}
	if err != nil {
		return invalid("secret", err.Error())
	}
	return nil
}

// EndpointSecret returns the endpoint's newest signing secret.
func (c *Client) EndpointSecret(ctx context.Context, app, endpoint string) (string, error) {
	ep, err := c.GetEndpoint(ctx, app, endpoint)
	if err != nil {
		return "", err
	}
	keys, err := c.store.SigningKeys(ctx, ep.ID)
	if err == nil {
		err = c.box.openKeys(ep.ID, keys)
	}
	if err != nil {
		return "", fmt.Errorf("hookd: endpoint secret: %w", err)
	}
	if len(keys) == 0 {
		return "", fmt.Errorf("hookd: endpoint %s has no signing key: %w", ep.ID, ErrNotFound)
	}
	return keys[0].Secret, nil
}

// RotateSecret gives the endpoint a new secret (secret, or a new whsec_ one when empty). The old
// keys keep signing for Config.RotationGrace, so receivers can switch without missing a delivery.
func (c *Client) RotateSecret(ctx context.Context, app, endpoint, secret string) (string, error) {
	return c.RotateSecretGrace(ctx, app, endpoint, secret, c.cfg.RotationGrace)
}

// RotateSecretGrace is RotateSecret with the old keys signing for grace instead of
// Config.RotationGrace (zero: they stop at once, so the new secret replaces them).
func (c *Client) RotateSecretGrace(ctx context.Context, app, endpoint, secret string, grace time.Duration) (string, error) {
	if grace < 0 {
		return "", invalid("gracePeriodSeconds", "must be zero or positive")
	}
	var id string
	err := c.inApp(ctx, app, func(tx Tx, a *Application) error {
		ep, err := tx.GetEndpoint(ctx, a.ID, endpoint)
		if err != nil {
			return err
		}
		if secret == "" {
			secret = signature.NewSecret()
		} else if err := CheckSecret(secret, ep.Scheme); err != nil {
			return err
		}
		id = ep.ID
		now := c.now()
		return tx.AddSigningKey(ctx, ep.ID, SigningKey{Secret: c.box.seal(ep.ID, secret), CreatedAt: now}, now.Add(grace))
	})
	if err != nil {
		return "", fmt.Errorf("hookd: rotate secret of %q: %w", endpoint, err)
	}
	c.states.invalidate(id)
	return secret, nil
}

// checkSchemeChange refuses to move ep to scheme ("" is SchemeStandard) while one of its active
// keys cannot sign with it: a Stripe-shaped endpoint's secret of any text cannot sign Standard
// Webhooks, which need whsec_ or whsk_. Rotating the secret first (a new one suits every scheme)
// lets the change through.
func (c *Client) checkSchemeChange(ctx context.Context, tx Tx, ep *Endpoint, scheme SignatureScheme) error {
	if scheme == "" {
		scheme = SchemeStandard
	}
	if scheme == ep.Scheme {
		return nil
	}
	keys, err := tx.SigningKeys(ctx, ep.ID)
	if err != nil {
		return err
	}
	if err := c.box.openKeys(ep.ID, keys); err != nil {
		return err
	}
	now := c.now()
	for _, k := range keys {
		if k.ExpiresAt != nil && !k.ExpiresAt.After(now) {
			continue
		}
		var ve *ValidationError
		if err := CheckSecret(k.Secret, scheme); errors.As(err, &ve) {
			return invalid("scheme", fmt.Sprintf("the endpoint's signing secret cannot sign with %s (%s): rotate the secret first", scheme, ve.Reason))
		} else if err != nil {
			return err
		}
	}
	return nil
}

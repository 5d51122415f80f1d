-- hookd schema, version 12: each attempt's request and response headers, as JSON text
-- (hookd.AttemptHeaders; '' for none): the signature headers in full, the endpoint's own headers'
-- values redacted, each side bounded.
ALTER TABLE hookd_attempts ADD COLUMN request_headers TEXT NOT NULL DEFAULT '';
ALTER TABLE hookd_attempts ADD COLUMN response_headers TEXT NOT NULL DEFAULT '';

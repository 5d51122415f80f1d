-- hookd schema, version 10: each attempt's request and response headers, as JSON text
-- (hookd.AttemptHeaders; '' for none): the signature headers in full, the endpoint's own headers'
-- values redacted, each side bounded.
ALTER TABLE hookd_attempts ADD COLUMN request_headers text NOT NULL DEFAULT '',
	ADD COLUMN response_headers text NOT NULL DEFAULT '';

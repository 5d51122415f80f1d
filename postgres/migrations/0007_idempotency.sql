-- hookd schema on PostgreSQL, version 7: the digest of the request a response kept for an
-- Idempotency-Key answered, so that the key sent again with another request is refused rather
-- than answered with the first response. NULL on the rows stored before it, which replay as they
-- did.
ALTER TABLE hookd_idempotency ADD COLUMN request_hash bytea;

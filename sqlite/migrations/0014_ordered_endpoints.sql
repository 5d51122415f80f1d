-- hookd schema, version 14: ordered endpoints. An ordered endpoint's deliveries are attempted one
-- at a time in id order; a pending delivery parked behind an earlier one has next_attempt_at NULL
-- (the index hookd_deliveries_endpoint_id_status finds the endpoint's first pending delivery).
ALTER TABLE hookd_endpoints ADD COLUMN ordered INTEGER NOT NULL DEFAULT 0;

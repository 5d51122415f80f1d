-- hookd schema, version 12: the slots of each endpoint's cap of attempts in flight that the
-- processes of one database hold (hookd.SlotLeaser), so that the cap holds across processes.
-- A row is one holder's (a process's) slots of one endpoint, leased until lease_until on the
-- database's clock; a row past it counts for nothing and the next acquisition drops it.
CREATE TABLE hookd_endpoint_slots (
	endpoint_id text COLLATE "C" NOT NULL,
	holder text COLLATE "C" NOT NULL,
	slots integer NOT NULL CHECK (slots > 0),
	lease_until timestamptz NOT NULL,
	PRIMARY KEY (endpoint_id, holder)
);

-- hookd_acquire_slots grants p_holder up to p_want slots of p_endpoint beyond the p_held it
-- counts as its own, within p_capacity for all live holders, sets its row to p_held plus those
-- granted with a new lease, and returns how many it granted: one round trip. The endpoint's
-- acquisitions take turns under a transaction-scoped advisory lock on a hash of its id, and each
-- statement below reads what the one before it committed (READ COMMITTED takes a snapshot a
-- statement), so two holders never both count a slot as free.
CREATE FUNCTION hookd_acquire_slots(p_endpoint text, p_holder text, p_held integer, p_want integer,
	p_capacity integer, p_lease interval) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
	others integer;
	granted integer;
BEGIN
	PERFORM pg_advisory_xact_lock(hashtextextended('hookd_endpoint_slots ' || p_endpoint, 0));
	DELETE FROM hookd_endpoint_slots WHERE endpoint_id = p_endpoint AND lease_until <= now();
	SELECT coalesce(sum(slots), 0) INTO others FROM hookd_endpoint_slots
		WHERE endpoint_id = p_endpoint AND holder <> p_holder;
	granted := greatest(least(p_want, p_capacity - others - p_held), 0);
	IF p_held + granted <= 0 THEN
		DELETE FROM hookd_endpoint_slots WHERE endpoint_id = p_endpoint AND holder = p_holder;
		RETURN 0;
	END IF;
	INSERT INTO hookd_endpoint_slots (endpoint_id, holder, slots, lease_until)
		VALUES (p_endpoint, p_holder, p_held + granted, now() + p_lease)
		ON CONFLICT (endpoint_id, holder) DO UPDATE SET slots = EXCLUDED.slots, lease_until = EXCLUDED.lease_until;
	RETURN granted;
END
$$;

-- hookd schema on PostgreSQL, version 16: a repair. A database migrated by a build of the time
-- when migration 12 had an earlier text has hookd_acquire_slots with six arguments, returning
-- only the slots granted, and hookd_endpoint_slots refusing a row of no slots (a holder that
-- wants a share); every build since calls the function of seven arguments and writes such rows.
-- This brings either text of migration 12 to today's: it drops the function of six arguments
-- where it is, (re)creates the function of seven, and makes the check allow zero. On a database
-- that applied today's text it changes nothing.
DROP FUNCTION IF EXISTS hookd_acquire_slots(text, text, integer, integer, integer, interval);

-- The same function as migration 12 creates; see there.
CREATE OR REPLACE FUNCTION hookd_acquire_slots(p_endpoint text, p_holder text, p_held integer, p_want integer,
	p_capacity integer, p_lease interval, p_want_lease interval, OUT granted integer, OUT contenders integer)
LANGUAGE plpgsql AS $$
DECLARE
	others integer;
BEGIN
	PERFORM pg_advisory_xact_lock(hashtextextended('hookd_endpoint_slots ' || p_endpoint, 0));
	DELETE FROM hookd_endpoint_slots WHERE endpoint_id = p_endpoint AND lease_until <= now();
	SELECT coalesce(sum(slots), 0), count(*) INTO others, contenders FROM hookd_endpoint_slots
		WHERE endpoint_id = p_endpoint AND holder <> p_holder;
	granted := greatest(least(p_want, p_capacity - others - p_held), 0);
	INSERT INTO hookd_endpoint_slots (endpoint_id, holder, slots, lease_until)
		VALUES (p_endpoint, p_holder, greatest(p_held + granted, 0),
			now() + CASE WHEN p_held + granted > 0 THEN p_lease ELSE least(p_lease, p_want_lease) END)
		ON CONFLICT (endpoint_id, holder) DO UPDATE SET slots = EXCLUDED.slots, lease_until = EXCLUDED.lease_until;
	contenders := contenders + 1;
END
$$;

-- The check's name is the one PostgreSQL gave the column's check in migration 12, either text.
ALTER TABLE hookd_endpoint_slots DROP CONSTRAINT IF EXISTS hookd_endpoint_slots_slots_check;
ALTER TABLE hookd_endpoint_slots ADD CONSTRAINT hookd_endpoint_slots_slots_check CHECK (slots >= 0);

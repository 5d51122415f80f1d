-- hookd schema, version 4: the pending deliveries in id order, for the sweeper of a queue outside
-- the database (DueDeliveries).
CREATE INDEX hookd_deliveries_pending ON hookd_deliveries (id) WHERE status = 'pending';

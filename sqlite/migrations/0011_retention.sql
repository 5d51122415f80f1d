-- hookd schema, version 11: the index the retention cleaner walks, oldest messages first.
CREATE INDEX hookd_messages_created_at ON hookd_messages (created_at);

-- hookd schema on PostgreSQL, version 4: message tags and payload retention.
--
-- tags holds a message's tags as a JSON list (as channels does); hookd_message_tags holds them
-- one a row, so that a list of the messages with one tag walks an index. payload_expires_at is
-- when the payload is deleted; NULL: kept until expunged. The sweep clears it with the payload,
-- so its index holds only the payloads still to expire.
ALTER TABLE hookd_messages ADD COLUMN tags jsonb;
ALTER TABLE hookd_messages ADD COLUMN payload_expires_at timestamptz;

CREATE INDEX hookd_messages_payload_expires_at ON hookd_messages (payload_expires_at)
    WHERE payload_expires_at IS NOT NULL;

CREATE TABLE hookd_message_tags (
    app_id     text COLLATE "C" NOT NULL,
    tag        text COLLATE "C" NOT NULL,
    message_id text COLLATE "C" NOT NULL REFERENCES hookd_messages (id) ON DELETE CASCADE,
    PRIMARY KEY (app_id, tag, message_id)
);

CREATE INDEX hookd_message_tags_message_id ON hookd_message_tags (message_id);

-- 0013: one row per callback delivery attempt, so the console can show each try of an event
-- (when it started, how long it took, the receiver's HTTP status or the error that stood for an
-- answer) and not only workflow_events' count and last error. The callback worker writes a row in
-- the same transaction that updates the event's state; "deliver again" adds rows after the old ones.
-- url is the receiver as it was tried (an event's URL does not change today; kept per attempt so
-- the history stays true if it ever does).

CREATE TABLE callback_attempts (
    event_id     INTEGER NOT NULL REFERENCES workflow_events (id),
    attempt      INTEGER NOT NULL CHECK (attempt >= 1),         -- 1, 2, ... in the order they were made
    started_at   TEXT NOT NULL,                                 -- emulator clock, as every other timestamp
    duration_ms  INTEGER NOT NULL CHECK (duration_ms >= 0),
    http_status  INTEGER,                                       -- null when no answer came
    error        TEXT,                                          -- null when delivered
    url          TEXT NOT NULL,
    PRIMARY KEY (event_id, attempt)
) STRICT;

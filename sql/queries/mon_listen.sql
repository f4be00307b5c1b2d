-- The console's notification channels (sent with the simple protocol:
-- two statements). Engine triggers NOTIFY them on job and event changes.
LISTEN cleanup_jobs; LISTEN cleanup_events

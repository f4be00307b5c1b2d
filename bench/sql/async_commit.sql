-- A session setting for the measured variant "appends without waiting for
-- the WAL flush": a lost append is caught by the seal's count check (C3).
SET synchronous_commit = off

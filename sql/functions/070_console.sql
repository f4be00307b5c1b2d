-- 070_console: what the operator console writes. Every action taken from
-- the console (and every refusal of one) is recorded in cleanup.audit and
-- announced on the cleanup_events channel, so every open console shows it.

-- Records one operator action. Texts are bounded to the table's limits
-- (over-long values are cut, never rejected: an audit row must not be lost
-- because an engine message was long). Returns the new row's id.
CREATE OR REPLACE FUNCTION cleanup.audit_record(p_os_user text, p_action text, p_job bigint,
                                                p_confirmation text, p_outcome text)
RETURNS bigint LANGUAGE plpgsql
AS $$
DECLARE
    v_id bigint;
BEGIN
    IF p_action IS NULL OR p_action = '' THEN
        RAISE EXCEPTION 'audit action must not be empty' USING ERRCODE = 'CU101';
    END IF;
    INSERT INTO cleanup.audit (os_user, action, job_id, confirmation, outcome)
    VALUES (left(coalesce(nullif(p_os_user, ''), 'unknown'), 200), left(p_action, 40), p_job,
            left(p_confirmation, 400), left(coalesce(p_outcome, ''), 2000))
    RETURNING id INTO v_id;
    PERFORM pg_notify('cleanup_events', coalesce(p_job::text, ''));
    RETURN v_id;
END $$;

-- An audit row for a deletion the engine made on its own (T8, seed 004:
-- every parent delete is audited): the library or server a step deleted.
-- os_user is what the runner said (cleanup.os_user, set per transaction)
-- or '(engine)'; db_role is the session's login role (the column's default).
CREATE OR REPLACE FUNCTION cleanup.audit_engine(p_job bigint, p_action text, p_outcome text)
RETURNS void LANGUAGE sql
AS $$
    INSERT INTO cleanup.audit (os_user, action, job_id, confirmation, outcome)
    VALUES (left(coalesce(nullif(current_setting('cleanup.os_user', true), ''), '(engine)'), 200),
            left(p_action, 40), p_job, NULL, left(p_outcome, 2000));
$$;

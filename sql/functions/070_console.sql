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

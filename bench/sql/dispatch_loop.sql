-- bench_dispatch: microseconds per call of $1 iterations, through a mode
-- function as cleanup.step_exec calls its modes ($2 true: r := f(...);
-- j := r.j; s := r.s) or inline ($2 false: the same two assignments).
CREATE OR REPLACE FUNCTION public.bench_dispatch(n int, split boolean)
RETURNS double precision LANGUAGE plpgsql AS $$
DECLARE
    j  cleanup.jobs;
    s  cleanup.job_steps;
    r  record;
    t0 timestamptz := clock_timestamp();
    i  int;
BEGIN
    j.cursor_id := 0;
    FOR i IN 1..n LOOP
        IF split THEN
            r := public.bench_mode_noop(1, false, j, s);
            j := r.j;
            s := r.s;
        ELSE
            s.action := 'drain';
            j.cursor_id := j.cursor_id + 1;
        END IF;
    END LOOP;
    RETURN extract(epoch FROM clock_timestamp() - t0) * 1e6 / n;
END $$

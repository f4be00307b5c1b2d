-- bench_dispatch: a step mode that does what the cheapest real one does
-- with its arguments (the cost of the dispatcher itself).
CREATE OR REPLACE FUNCTION public.bench_mode_noop(p_job bigint, p_preview boolean,
                                                  INOUT j cleanup.jobs, INOUT s cleanup.job_steps)
LANGUAGE plpgsql AS $$ BEGIN s.action := 'drain'; j.cursor_id := j.cursor_id + 1; END $$

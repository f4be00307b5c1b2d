-- bench_workers, control: items left in the four libraries after the
-- control's deletions (0 when it ran to the end).
SELECT count(*) FROM inventory.items

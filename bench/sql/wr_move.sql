-- bench_writers: a move of one item between the writers' two libraries of
-- the same server ($2 and $3), whichever way it is.
UPDATE inventory.items SET library_id = CASE WHEN library_id = $2::bigint THEN $3::bigint ELSE $2::bigint END
 WHERE id = $1::bigint

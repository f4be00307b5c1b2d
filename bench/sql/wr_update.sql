-- bench_writers: a sync writer's update of one item in place (its title).
UPDATE inventory.items SET title = $2::text, updated_at = now() WHERE id = $1::bigint

-- bench_count_cache: a batch through the writers' mutation gateway
-- (inventory.write_items, 077_gateway.sql); $1 the JSON batch.
SELECT inventory.write_items($1::jsonb)

-- bench_shapes, writers in flight: locks item ext-<library>-<n> of library
-- $1 when n % $2 = 1 (unseen: seen items have even n) until the writer's
-- transaction ends; returns how many. A step meets them locked and retains
-- them (S5).
SELECT count(*) FROM (
  SELECT 1 FROM inventory.items i
   WHERE i.library_id = $1 AND split_part(i.external_id, '-', 3)::bigint % $2::int = 1
     FOR UPDATE OF i) q

-- bench_shapes: the schema contract checked (and marked clean) once after
-- a shape's own DDL, before anything is timed.
SELECT cleanup.contract_assert()

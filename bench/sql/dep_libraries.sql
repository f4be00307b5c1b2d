-- bench_dependents: the seeded libraries in id order with their server.
SELECT id, server_id FROM inventory.libraries ORDER BY id

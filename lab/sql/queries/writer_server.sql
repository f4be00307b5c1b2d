-- Does media server $1 exist? (cleanupctl writer --server)
SELECT s.id, s.name FROM inventory.media_servers s WHERE s.id = $1::bigint

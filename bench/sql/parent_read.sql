-- A parent-row reader during a removal: the library's row and its server's
-- row read FOR KEY SHARE (what a writer's foreign-key check takes), one
-- statement; it waits only while a transaction holds either row FOR UPDATE.
SELECT (SELECT l.id FROM inventory.libraries l WHERE l.id = $1 FOR KEY SHARE) AS library,
       (SELECT s.id FROM inventory.media_servers s WHERE s.id = $2 FOR KEY SHARE) AS server

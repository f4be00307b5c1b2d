-- A second library on the removal target's server, for the concurrent writer.
INSERT INTO inventory.libraries (server_id, name) VALUES ($1, 'bench writer') RETURNING id

SELECT version() AS version,
       current_setting('fsync') AS fsync,
       current_setting('synchronous_commit') AS synchronous_commit,
       current_setting('shared_buffers') AS shared_buffers,
       current_setting('wal_level') AS wal_level,
       current_setting('max_wal_size') AS max_wal_size

SELECT cleanup_lab.record_bundle($1::text)

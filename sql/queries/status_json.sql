SELECT cleanup.status_json()::text AS json

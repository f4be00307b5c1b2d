SELECT id, server_id, name, admission, job_id, item_count FROM cleanup.status_libraries()

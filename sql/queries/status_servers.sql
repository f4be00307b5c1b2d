SELECT id, name, admission, job_id, item_count, library_count FROM cleanup.status_servers()

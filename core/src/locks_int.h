/* Private to core/: turning a result of the lock query
 * (sql/queries/locks_tree.sql) into cleanup_lock_row records, shared by
 * cleanup_locks_snapshot() and the console's asynchronous monitor, which
 * sends the same named query itself. */
#ifndef CLEANUP_LOCKS_INT_H
#define CLEANUP_LOCKS_INT_H

#include <libpq-fe.h>
#include <stddef.h>
#include "cleanup/locks.h"

/* Converts the rows of RES (a PGRES_TUPLES_OK result of CLEANUP_Q_LOCKS_TREE)
 * into a malloc'd array *OUT of *N rows (NULL when none; free() it).
 * Returns CLEANUP_OK, or CLEANUP_ENOMEM (then *OUT is NULL and *N is 0),
 * or CLEANUP_ERROR when RES lacks the expected columns. */
int locks_rows_from_result(cleanup_lock_row **out, size_t *n, const PGresult *res);

#endif

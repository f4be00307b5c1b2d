/* Private to lab/: the lab's embedded SQL (lab/sql/, lab_sql_bundle.h)
 * run through the engine's public cleanup_query(). */
#ifndef CLEANUP_LAB_INT_H
#define CLEANUP_LAB_INT_H

#include "cleanup/query.h"
#include "lab_sql_bundle.h"

/* cleanup_query() with the lab's statement Q (lab/sql/queries/NAME.sql as
 * CLEANUP_LAB_Q_NAME). */
int lab_query(cleanup_rows **out, cleanup_engine *engine, enum lab_sql_query_id q, int n,
              const char *const *params, const char *context, cleanup_error *err);

#endif

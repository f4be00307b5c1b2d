# Embeds every file under sql/ into the binary, so `cleanupctl install` and the
# engine's named queries work from any directory.
#
# sql/schema/NNN_*.sql      versioned migrations, applied once each, in order
# sql/functions/*.sql       idempotent definitions (CREATE OR REPLACE), re-applied
#                           whenever the bundle checksum changes
# sql/queries/NAME.sql      one statement each; NAME becomes CLEANUP_Q_NAME
file(GLOB CLEANUP_SQL_FILES CONFIGURE_DEPENDS
     ${CMAKE_SOURCE_DIR}/sql/schema/*.sql
     ${CMAKE_SOURCE_DIR}/sql/functions/*.sql
     ${CMAKE_SOURCE_DIR}/sql/queries/*.sql)

set(CLEANUP_SQL_C ${CMAKE_BINARY_DIR}/generated/sql_bundle.c)
set(CLEANUP_SQL_H ${CMAKE_BINARY_DIR}/generated/sql_bundle.h)
add_custom_command(
  OUTPUT ${CLEANUP_SQL_C} ${CLEANUP_SQL_H}
  COMMAND ${CMAKE_COMMAND} -DSQL_DIR=${CMAKE_SOURCE_DIR}/sql
          -DOUT_C=${CLEANUP_SQL_C} -DOUT_H=${CLEANUP_SQL_H}
          -P ${CMAKE_SOURCE_DIR}/cmake/GenSQLBundle.cmake
  DEPENDS ${CLEANUP_SQL_FILES} ${CMAKE_SOURCE_DIR}/cmake/GenSQLBundle.cmake
  COMMENT "Embedding sql/ into the engine")
add_custom_target(sql_bundle DEPENDS ${CLEANUP_SQL_C} ${CLEANUP_SQL_H})

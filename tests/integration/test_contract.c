/* The schema contract (seed 001): recorded by the installer, compared
 * before a step's domain mutations; an unknown incoming cascade or a
 * disabled guard is drift (CU403), harmless DDL is not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pgtest.h"

PGTEST_DB_GROUP(conninfo, pgtest_fresh_db("contract"))

static void test_contract_drift_stops_and_harmless_ddl_passes(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "ddl");
	char *recorded;

	(void)state;
	recorded = pgtest_text(c, "SELECT fingerprint FROM cleanup.schema_contract");
	assert_non_null(recorded);
	pgtest_exec(c, "SELECT cleanup.contract_assert()");

	/* Unrelated DDL marks the contract dirty; the comparison clears it. */
	pgtest_exec(c, "CREATE TABLE public.unrelated (id int)");
	assert_int_equal(pgtest_int(c, "SELECT dirty::int FROM cleanup.schema_contract"), 1);
	pgtest_exec(c, "SELECT cleanup.contract_assert()");
	assert_int_equal(pgtest_int(c, "SELECT dirty::int FROM cleanup.schema_contract"), 0);

	/* An incoming cascade would do uncounted work: drift. */
	pgtest_exec(c, "CREATE TABLE public.retries (id int, item_id bigint REFERENCES inventory.items ON DELETE CASCADE)");
	pgtest_fails(c, "CU403", "incoming_foreign_keys", "SELECT cleanup.contract_assert()");
	pgtest_exec(c, "DROP TABLE public.retries");
	pgtest_exec(c, "SELECT cleanup.contract_assert()");

	/* A disabled guard is drift, even though nothing was created. */
	pgtest_exec(c, "ALTER TABLE inventory.items DISABLE TRIGGER items_admit_insert");
	pgtest_fails(c, "CU403", "triggers", "SELECT cleanup.contract_assert()");
	pgtest_exec(c, "ALTER TABLE inventory.items ENABLE TRIGGER items_admit_insert");

	/* A replaced engine function is drift; drift never approves itself. */
	pgtest_exec(c, "CREATE OR REPLACE FUNCTION cleanup.holds_lock(key bigint) RETURNS boolean"
	               " LANGUAGE sql AS $$ SELECT true $$");
	pgtest_fails(c, "CU403", "functions", "SELECT cleanup.contract_assert()");
	pgtest_fails(c, "CU403", NULL, "SELECT cleanup.contract_assert()");
	assert_text_equal(pgtest_text(c, "SELECT fingerprint FROM cleanup.schema_contract"), recorded);
	free(recorded);
	PQfinish(c);
}

/* Defect: ALTER TABLE ... DISABLE TRIGGER ALL (or one RI trigger by name)
 * switched a foreign key off without changing the contract: the RI
 * triggers are internal, and 'triggers' lists only the others. Their
 * state is now part of 'constraints' and 'incoming_foreign_keys'. */
static void test_contract_disabled_ri_triggers_are_drift(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "ddl");
	char msg[512];
	char *ri;

	(void)state;
	/* A known reference, recorded by the installer's function. */
	pgtest_exec(c, "CREATE TABLE public.previews (id int, item_id bigint REFERENCES inventory.items)");
	pgtest_exec(c, "SELECT cleanup.contract_record()");
	pgtest_exec(c, "SELECT cleanup.contract_assert()");

	pgtest_exec(c, "ALTER TABLE public.previews DISABLE TRIGGER ALL");
	pgtest_fails(c, "CU403", "incoming_foreign_keys", "SELECT cleanup.contract_assert()");
	pgtest_exec(c, "ALTER TABLE public.previews ENABLE TRIGGER ALL");
	pgtest_exec(c, "SELECT cleanup.contract_assert()");

	/* One RI trigger of items -> libraries, by its generated name: the
	 * user triggers are unchanged, the key is not enforced. */
	ri = pgtest_text(c, "SELECT tgname FROM pg_trigger WHERE tgrelid = 'inventory.items'::regclass"
	                    " AND tgisinternal AND tgconstraint = (SELECT oid FROM pg_constraint"
	                    " WHERE conname = 'items_library_id_fkey') ORDER BY tgname LIMIT 1");
	assert_non_null(ri);
	pgtest_exec(c, "ALTER TABLE inventory.items DISABLE TRIGGER \"%s\"", ri);
	assert_string_equal(pgtest_fail(c, msg, sizeof msg, "SELECT cleanup.contract_assert()"), "CU403");
	assert_non_null(strstr(msg, "constraints"));
	assert_null(strstr(msg, " triggers"));
	pgtest_exec(c, "ALTER TABLE inventory.items ENABLE TRIGGER \"%s\"", ri);
	pgtest_exec(c, "SELECT cleanup.contract_assert()");
	free(ri);
	pgtest_exec(c, "DROP TABLE public.previews");
	pgtest_exec(c, "SELECT cleanup.contract_record()");
	PQfinish(c);
}

PGTEST_MAIN(cmocka_unit_test(test_contract_drift_stops_and_harmless_ddl_passes),
            cmocka_unit_test(test_contract_disabled_ri_triggers_are_drift))

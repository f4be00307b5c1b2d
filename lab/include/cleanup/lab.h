/* The lab's own SQL in a database: the explicit step that puts it there.
 *
 * The engine's installer (cleanup_install) installs only the engine. The
 * lab's definitions (lab/sql/functions/: schema cleanup_lab with
 * cleanup_lab.seed_demo, the demo seeder) are installed by this step,
 * which `cleanupctl demo`, `cleanupctl seed` (cleanup_seed) and the tests'
 * fixtures take; never by `cleanupctl install`. Schema cleanup_lab is
 * outside the engine's schema contract: installing it is no drift.
 */
#ifndef CLEANUP_LAB_H
#define CLEANUP_LAB_H

#include <stdbool.h>
#include "cleanup/engine.h"
#include "cleanup/error.h"

/* Installs the lab's definitions into ENGINE's database (the engine must
 * be installed: the seeder writes its tables) in one transaction,
 * serialized with other lab installs; does nothing when this lab bundle is
 * already there. *APPLIED (may be NULL) says whether it applied them. */
int cleanup_lab_install(bool *applied, cleanup_engine *engine, cleanup_error *err);

#endif

-- The plan phase's settings (014_plan.sql, 032_plan.sql) in the install
-- transaction: $1 a validator to record, $2 one to remove, $3 the default
-- mode (each NULL: unchanged); then what is recorded, and whether this
-- install changed it.
SELECT changed, default_mode, validators FROM cleanup.plan_install($1, $2, $3)

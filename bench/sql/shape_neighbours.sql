-- bench_shapes, shape neighbours: another application's schema in the same
-- database, 3,000 tables, each with a primary key, a foreign key to the
-- one before it and a CHECK (9,000 constraints). What a step reads of the
-- catalogs must not grow with them (cleanup.has_unknown_references).
DO $$
BEGIN
    CREATE SCHEMA neighbour;
    FOR i IN 1..3000 LOOP
        EXECUTE format('CREATE TABLE neighbour.t%s (id int PRIMARY KEY, up int REFERENCES neighbour.t%s (id), '
                       'v text CHECK (v <> ''''))', i, greatest(i - 1, 1));
    END LOOP;
END $$

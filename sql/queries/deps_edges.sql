SELECT * FROM cleanup.dependency_edges($1::int, $2::int)

SELECT d::text AS json, d->>'fingerprint' AS fingerprint, (d->'gaps')::text AS gaps
  FROM cleanup.dependency_evidence($1::int, $2::int) AS d

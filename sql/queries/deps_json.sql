SELECT d::text AS json, d->>'fingerprint' AS fingerprint, d->>'elapsed_ms' AS elapsed_ms
  FROM cleanup.dependency_evidence($1::int, $2::int, $3::int, $4::int) AS d

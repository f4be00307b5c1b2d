SELECT public.bench_dispatch($1::int, $2::boolean)

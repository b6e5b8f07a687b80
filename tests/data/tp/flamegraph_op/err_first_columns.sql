CREATE VIRTUAL TABLE fg USING __intrinsic_flamegraph((SELECT 1 AS id, NULL AS pid, 'a' AS name, 1 AS value)); SELECT name, cumulative_value FROM fg(__intrinsic_flamegraph_config('value','value'));

CREATE VIRTUAL TABLE fg USING __intrinsic_flamegraph((SELECT 1 AS id, 5 AS parent_id, 'a' AS name, 1 AS value)); SELECT name, cumulative_value FROM fg(__intrinsic_flamegraph_config('value','value'));
